/* _upsample_bilinear2d_aa against torch 2.14's values (committed constants): input
 * [1, 2, 5, 7] shrunk to [3, 4] (align_corners false and true), grown to [7, 9], and
 * shrunk to [2, 3] with the scales given (0.5, 0.45); the input channels-last; the
 * refusal of a missing output size. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "test_programs.h"
#include "test_util.h"

#define F32 ETRT_DTYPE_FLOAT32

static const float aa_x[70] = {
    -1.20000005f,  -0.590000033f, 0.0199999809f,  0.629999995f,  1.24000001f,   1.85000014f,
    -0.839999914f, -0.230000019f, 0.380000114f,   0.990000248f,  1.60000038f,   -1.08999991f,
    -0.479999781f, 0.130000353f,  0.74000001f,    1.35000062f,   1.96000028f,   -0.730000019f,
    -0.119999409f, 0.490000248f,  1.10000086f,    1.71000051f,   -0.979999781f, -0.36999917f,
    0.240000486f,  0.850000143f,  1.46000075f,    2.07000136f,   -0.619999886f, -0.00999927521f,
    0.600001335f,  1.21000004f,   1.82000065f,    -0.869998693f, -0.25999999f,  0.35000062f,
    0.96000123f,   1.56999993f,   -1.11999941f,   -0.509998798f, 0.100001812f,  0.710000515f,
    1.32000113f,   1.93000174f,   -0.759999514f,  -0.149998903f, 0.460001707f,  1.07000041f,
    1.68000102f,   -1.00999832f,  -0.399999619f,  0.210000992f,  0.820001602f,  1.43000221f,
    2.04000282f,   -0.650000334f, -0.0399997234f, 0.570000887f,  1.1800015f,    1.79000211f,
    -0.899997234f, -0.290000439f, 0.320000172f,   0.930000782f,  1.54000139f,   -1.14999795f,
    -0.539997339f, 0.0700032711f, 0.680000067f,   1.29000068f};
static const float aa_small[24] = {
    -0.464761883f, 0.484514415f, 0.588628709f,  0.15414986f,  0.710317731f,   0.762133718f,
    0.0365336314f, 0.780476809f, 0.0246263202f, 0.233086422f, 0.978343368f,   0.508844435f,
    1.01789212f,   0.375086337f, -0.143084556f, 0.806191385f, 0.00793753192f, 0.405467808f,
    0.853201926f,  0.636826217f, 0.744014382f,  0.274516225f, 0.00148795813f, 0.554762125f};
static const float aa_small_align[24] = {
    -0.0714285001f, 0.605357289f, 0.352143049f,   0.0539288558f,  0.541071773f, 0.429687917f,
    0.51531297f,    1.02000082f,  -0.0732137561f, 0.66250062f,    0.645000696f, 0.170000553f,
    0.805103064f,   0.151786566f, 0.428929865f,   0.896786511f,   0.205358118f, 0.535939157f,
    0.570001602f,   0.404375345f, 0.769644022f,   -0.0562477633f, 0.235626549f, 0.895000398f};
static const float aa_large[126] = {
    -1.20000005f,  -0.793333292f,   -0.318888932f, 0.155555606f,  0.629999995f,   1.10444438f,
    1.57888913f,   0.95333302f,     -0.839999914f, -0.645714402f, -0.239047557f,  0.235396847f,
    0.70984143f,   1.18428588f,     0.192063779f,  0.247460648f,  0.250476301f,   -0.28571406f,
    0.0471429452f, 0.453809828f,    0.928254306f,  1.19317484f,   0.9342857f,     -0.424602717f,
    -0.473967731f, 0.000476693007f, 0.407143444f,  0.74000001f,   1.14666712f,    1.62111151f,
    1.36222219f,   -0.730000019f,   -0.255555183f, 0.218889445f,  0.693333864f,   1.10000086f,
    1.43285763f,   0.268095285f,    -0.043174468f, 0.22174637f,   -0.0371423773f, 0.437301904f,
    0.91174674f,   1.38619149f,     1.79285848f,   0.711428881f,  -0.13904731f,   -0.293173879f,
    0.181270808f,  0.655714631f,    1.13015902f,   0.81888932f,   0.664762795f,   1.07142925f,
    -0.619999886f, -0.213332757f,   0.261112094f,  0.735556662f,  1.21000004f,    1.6844449f,
    0.325555831f,  -0.666665673f,   -0.25999999f,  0.35000062f,   0.756667733f,   1.23111176f,
    0.97222209f,   -1.11999941f,    -0.645554543f, -0.171109408f, 0.303334802f,   0.710000515f,
    0.904286563f,  1.31095374f,     0.94730258f,   0.0598416664f, -0.565713406f,  -0.0912685692f,
    0.383175969f,  0.85762006f,     1.26428652f,   0.654286742f,  1.0609535f,     0.487778723f,
    -0.347300678f, 0.127144188f,    0.601589084f,  1.07603347f,   1.23619139f,    1.01428604f,
    -1.00999832f,  -0.60333246f,    -0.128888249f, 0.345556766f,  0.820001602f,   1.29444647f,
    1.76889157f,   1.14333463f,     -0.650000334f, -0.317142069f, 0.0895247012f,  0.563969374f,
    1.03841436f,   1.51285923f,     0.153970674f,  0.104604475f,  0.264762014f,   0.0428573042f,
    0.375714809f,  0.782381952f,    0.628255367f,  0.316985965f,  0.791430831f,   -0.200790673f,
    -0.145395428f, 0.32904771f,     0.735714734f,  0.930000782f,  1.3366679f,     0.344446212f,
    -1.01444221f,  -0.539997339f,   -0.065552488f, 0.408890545f,  0.883333683f,   1.29000068f};
static const float aa_scaled[12] = {-0.0080518499f, 0.579743326f, 0.299867272f, 0.540162742f,
                                    0.391741931f,   0.663634419f, 0.795010269f, 0.069230482f,
                                    0.638406575f,   0.225877598f, 0.555928707f, 0.558838308f};

typedef struct {
  int32_t h, w, align;
  double scale_h, scale_w; /* 0: none */
  const float *want;
  int channels_last;
} aa_case;

static void test_upsample_aa(void) {
  const aa_case cases[] = {
      {3, 4, 0, 0, 0, aa_small, 0}, {3, 4, 1, 0, 0, aa_small_align, 0},
      {7, 9, 0, 0, 0, aa_large, 0}, {2, 3, 0, 0.5, 0.45, aa_scaled, 0},
      {3, 4, 0, 0, 0, aa_small, 1},
  };
  for (size_t k = 0; k < sizeof cases / sizeof *cases; ++k) {
    const aa_case *c = &cases[k];
    etrt_test_kp p;
    etrt_test_kp_init(&p);
    int32_t x = etrt_test_kp_tensor(&p, F32, 4, (int32_t[]){1, 2, 5, 7}, NULL, 0);
    if (c->channels_last) etrt_test_kp_dim_order(&p, x, (const uint8_t[]){0, 2, 3, 1});
    int32_t y = etrt_test_kp_tensor(&p, F32, 4, (int32_t[]){1, 2, c->h, c->w}, NULL, 0);
    int32_t sh = c->scale_h > 0 ? etrt_test_kp_double(&p, c->scale_h) : etrt_test_kp_none(&p);
    int32_t sw = c->scale_w > 0 ? etrt_test_kp_double(&p, c->scale_w) : etrt_test_kp_none(&p);
    etrt_test_kp_call(&p, "aten::_upsample_bilinear2d_aa.out",
                      (int32_t[]){x, etrt_test_kp_ints(&p, (int64_t[]){c->h, c->w}, 2),
                                  etrt_test_kp_bool(&p, c->align), sh, sw, y, y},
                      7);
    size_t size;
    uint8_t *pte = etrt_test_kp_write(&p, &x, 1, &y, 1, &size);
    float in[70], out[126];
    for (int i = 0; i < 70; ++i) /* logical i = ch * 35 + hw; NHWC stores it at hw * 2 + ch */
      in[c->channels_last ? (i % 35) * 2 + i / 35 : i] = aa_x[i];
    etrt_tensor_view v = {in, F32, 4, {1, 2, 5, 7}};
    const int n = 2 * c->h * c->w;
    CHECK_OK(etrt_test_kp_run(pte, size, &v, 1, out, (size_t)n * sizeof *out, NULL));
    for (int i = 0; i < n; ++i)
      if (!(fabs(out[i] - c->want[i]) <= 1e-5 * (1 + fabs(c->want[i]))))
        etrt_test_fail(__FILE__, __LINE__, "case %zu: element %d is %.9g, want %.9g", k, i, out[i],
                       c->want[i]);
    free(pte);
  }
}

static void test_upsample_aa_refused(void) {
  etrt_test_kp p;
  etrt_test_kp_init(&p);
  int32_t x = etrt_test_kp_tensor(&p, F32, 4, (int32_t[]){1, 2, 5, 7}, NULL, 0);
  int32_t y = etrt_test_kp_tensor(&p, F32, 4, (int32_t[]){1, 2, 3, 4}, NULL, 0);
  int32_t none = etrt_test_kp_none(&p);
  etrt_test_kp_call(&p, "aten::_upsample_bilinear2d_aa.out",
                    (int32_t[]){x, etrt_test_kp_ints(&p, (int64_t[]){3}, 1),
                                etrt_test_kp_bool(&p, 0), none, none, y, y},
                    7);
  size_t size;
  uint8_t *pte = etrt_test_kp_write(&p, &x, 1, &y, 1, &size);
  float in[70] = {0}, out[24];
  etrt_tensor_view v = {in, F32, 4, {1, 2, 5, 7}};
  CHECK_FAILS(etrt_test_kp_run(pte, size, &v, 1, out, sizeof out, NULL),
              ETRT_ERROR_INVALID_ARGUMENT,
              "argument 1 (output_size) must be two sizes of 1 or more");
  free(pte);
}

int main(void) {
  RUN_TEST(test_upsample_aa);
  RUN_TEST(test_upsample_aa_refused);
  return TEST_EXIT();
}
