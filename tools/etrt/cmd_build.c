/* etrt build: an ONNX model to a .pte program (include/etrt/build.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "commands.h"
#include "etrt/build.h"

static void etrt_build_usage(FILE *out) {
  fprintf(out,
          "usage: etrt build MODEL.onnx -o OUT.pte [options]\n\n"
          "Builds an ExecuTorch program from an ONNX model: the operations the engine runs\n"
          "on the target device go into engine partitions (EtrtBackend delegates), the\n"
          "rest into CPU partitions, with host/device copies planned at the boundaries.\n\n"
          "options:\n"
          "  -o, --output FILE        the .pte to write (atomically: nothing on failure)\n"
          "  --device cpu|cuda:N      where engine partitions run (default: cuda:0 when a\n"
          "                           GPU is present, ETRT_DEVICE=sim:N included, else cpu)\n"
          "  --target-device cuda:K   the target_device label of every GPU partition, used\n"
          "                           verbatim (default: each partition's real device)\n"
          "  --shape SPEC             bounds of dynamic input sizes (repeatable):\n"
          "                             SYMBOL:MIN:MAX   every axis named SYMBOL in the model\n"
          "                             SYMBOL:N         the same, fixed\n"
          "                             INPUT:DIMS       a whole input, e.g. x:1x3x224x224\n"
          "                             INPUT:MIN:MAX    a whole input between two shapes,\n"
          "                                              e.g. ids:1x16:8x512\n"
          "                           (inputs are looked up first; an INPUT bound wins over\n"
          "                           a SYMBOL bound)\n"
          "  --shape-values SPEC      values of a graph input that decides shapes (a\n"
          "                           Reshape's shape, Slice's starts, TopK's k given as\n"
          "                           an input, not an initializer; repeatable):\n"
          "                             INPUT:V1,V2,...        the values it will get\n"
          "                             INPUT:MIN1,...:MAX1,...  bounds of each value\n"
          "                           (signed integers, INPUT: for none; int32 or int64\n"
          "                           inputs of rank 0 or 1, at most 64 values). It stays a\n"
          "                           program input, passed on the host; other values are\n"
          "                           refused at run time, and the plan is specialised for\n"
          "                           them. Ranges suit values that sizes grow with. Without\n"
          "                           it the values are read when the program runs, on the\n"
          "                           CPU, and the outputs they size take the run's shape;\n"
          "                           the few operators that still need them now (Col2Im,\n"
          "                           DFT) are refused naming the input\n"
          "  --sequence SPEC          a sequence or optional graph input (repeatable):\n"
          "                             INPUT:N     sequence INPUT holds N tensors, each a\n"
          "                                         program input INPUT[i] (bounded with\n"
          "                                         --shape 'INPUT[i]:DIMS')\n"
          "                             INPUT:none  optional INPUT holds no value\n"
          "                           A sequence output becomes one output per tensor;\n"
          "                           what a length depends on: --shape-values INPUT:V\n");
  fprintf(out,
          "  --precision P            the types GPU plans compute in (CPU plans always\n"
          "                           keep float32):\n"
          "                             fp32  float32 throughout (default; ~1e-5 of a\n"
          "                                   float64 reference)\n"
          "                             tf32  float32 tensors, GEMMs and convolutions on\n"
          "                                   TF32 tensor cores (~1e-2 relative)\n"
          "                             fp16  weights and activations in float16, float32\n"
          "                                   accumulation; casts at the plan's float32\n"
          "                                   inputs and outputs (~2e-2 relative)\n"
          "                             bf16  the same in bfloat16 (~5e-2 relative)\n"
          "  --io-on-device           method inputs and outputs stay on the GPU: the caller\n"
          "                           passes device memory and no copies are planned\n"
          "  --place NODE=DEVICE      run ONNX node NODE on DEVICE (repeatable), e.g. to\n"
          "                           spread partitions over GPUs: --place fc2=cuda:1\n"
          "                           (NODE is the NodeProto name; a node without one is\n"
          "                           OPTYPE_INDEX, e.g. Relu_3)\n"
          "  --no-tune                do not time the cuDNN convolutions on the target GPU\n"
          "                           (done by default when building for a GPU present\n"
          "                           here, the choices recorded in the plan; also\n"
          "                           ETRT_CONV_TUNE=0): contexts time them when created\n"
          "  --quiet                  no progress lines\n"
          "  -h, --help               this text\n\n"
          "exit status: 0 built, 1 failed while working, 2 bad model or bad flags\n");
}

static void etrt_build_print(const char *line, void *user) {
  (void)user;
  fprintf(stderr, "%s\n", line);
}

static int etrt_build_bad(const char *fmt, const char *arg) {
  fprintf(stderr, "etrt build: ");
  fprintf(stderr, fmt, arg);
  fprintf(stderr, "\n(see 'etrt build --help')\n");
  return 2;
}

int etrt_cmd_build(int argc, char **argv) {
  etrt_build_options options;
  etrt_build_options_init(&options);
  const char *input = NULL, *output = NULL;
  int quiet = 0, code = 2;
  const char **shapes = calloc((size_t)argc + 1, sizeof *shapes);
  const char **shape_values = calloc((size_t)argc + 1, sizeof *shape_values);
  const char **sequences = calloc((size_t)argc + 1, sizeof *sequences);
  etrt_build_placement *placements = calloc((size_t)argc + 1, sizeof *placements);
  if (shapes == NULL || shape_values == NULL || sequences == NULL || placements == NULL) {
    fprintf(stderr, "etrt build: out of memory\n");
    code = 1;
    goto done;
  }
  for (int i = 1; i < argc; ++i) {
    const char *arg = argv[i];
    const char *value = i + 1 < argc ? argv[i + 1] : NULL;
    int takes_value = strcmp(arg, "-o") == 0 || strcmp(arg, "--output") == 0 ||
                      strcmp(arg, "--device") == 0 || strcmp(arg, "--target-device") == 0 ||
                      strcmp(arg, "--shape") == 0 || strcmp(arg, "--precision") == 0 ||
                      strcmp(arg, "--place") == 0 || strcmp(arg, "--shape-values") == 0 ||
                      strcmp(arg, "--sequence") == 0;
    if (takes_value && value == NULL) {
      code = etrt_build_bad("%s needs a value", arg);
      goto done;
    }
    if (strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0) {
      etrt_build_usage(stdout);
      code = 0;
      goto done;
    } else if (strcmp(arg, "-o") == 0 || strcmp(arg, "--output") == 0) {
      output = value;
    } else if (strcmp(arg, "--device") == 0) {
      options.device = value;
    } else if (strcmp(arg, "--target-device") == 0) {
      options.target_device = value;
    } else if (strcmp(arg, "--shape") == 0) {
      shapes[options.num_shapes++] = value;
    } else if (strcmp(arg, "--shape-values") == 0) {
      shape_values[options.num_shape_values++] = value;
    } else if (strcmp(arg, "--sequence") == 0) {
      sequences[options.num_sequences++] = value;
    } else if (strcmp(arg, "--precision") == 0) {
      static const char *const names[] = {"fp32", "tf32", "fp16", "bf16"};
      int found = -1;
      for (int p = 0; p < 4; ++p)
        if (strcmp(value, names[p]) == 0) found = p;
      if (found < 0) {
        code = etrt_build_bad("--precision '%s': expected fp32, tf32, fp16 or bf16", value);
        goto done;
      }
      options.precision = (etrt_precision)found;
    } else if (strcmp(arg, "--place") == 0) {
      const char *eq = strrchr(value, '=');
      if (eq == NULL || eq == value || eq[1] == '\0') {
        code = etrt_build_bad("--place '%s': expected NODE=DEVICE", value);
        goto done;
      }
      /* argv is writable: split in place. */
      char *split = argv[i + 1] + (eq - value);
      *split = '\0';
      placements[options.num_placements].node = argv[i + 1];
      placements[options.num_placements].device = split + 1;
      options.num_placements++;
    } else if (strcmp(arg, "--io-on-device") == 0) {
      options.io_on_device = 1;
    } else if (strcmp(arg, "--no-tune") == 0) {
      options.no_tune = 1;
    } else if (strcmp(arg, "--quiet") == 0 || strcmp(arg, "-q") == 0) {
      quiet = 1;
    } else if (arg[0] == '-' && arg[1] != '\0') {
      code = etrt_build_bad("unknown option '%s'", arg);
      goto done;
    } else if (input == NULL) {
      input = arg;
    } else {
      code = etrt_build_bad("more than one model given ('%s')", arg);
      goto done;
    }
    if (takes_value) ++i;
  }
  if (input == NULL) {
    code = etrt_build_bad("%s", "no model given");
    goto done;
  }
  if (output == NULL) {
    code = etrt_build_bad("%s", "no output given (-o OUT.pte)");
    goto done;
  }
  options.shapes = shapes;
  options.shape_values = shape_values;
  options.sequences = sequences;
  options.placements = placements;
  if (!quiet) options.progress = etrt_build_print;
  etrt_status status = etrt_build_onnx_file(input, &options, output);
  if (status == ETRT_OK) {
    code = 0;
    goto done;
  }
  fprintf(stderr, "etrt build: %s\n", etrt_last_error());
  switch (status) {
    case ETRT_ERROR_INVALID_ARGUMENT:
    case ETRT_ERROR_INVALID_FORMAT:
    case ETRT_ERROR_UNSUPPORTED:
    case ETRT_ERROR_NOT_FOUND:
      code = 2;
      break;
    default:
      code = 1;
  }
done:
  free(shapes);
  free(shape_values);
  free(sequences);
  free(placements);
  return code;
}
