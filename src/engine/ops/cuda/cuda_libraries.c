/* cuBLASLt and cuDNN through dlopen (see cuda_libraries.h). The soname of the toolkit the code
 * was compiled against is tried first (the loader's search path: LD_LIBRARY_PATH,
 * ld.so.cache), then the same file in that toolkit's library folder, so a build runs
 * where it was built without any setup. */
#ifdef ETRT_HAVE_CUDA
#include "engine/ops/cuda/cuda_libraries.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "base/log.h"
#include "base/status.h"

#define ETRT_STRINGIFY_(x) #x
#define ETRT_STRINGIFY(x) ETRT_STRINGIFY_(x)
#define ETRT_CUBLASLT_SONAME "libcublasLt.so." ETRT_STRINGIFY(CUBLAS_VER_MAJOR)
#define ETRT_CUDNN_SONAME "libcudnn.so." ETRT_STRINGIFY(CUDNN_MAJOR)

/* dlsym returns an object pointer; C11 allows converting it to a function pointer
 * only through memcpy (POSIX guarantees the representations match). */
static int etrt_cublaslt_symbol(void *library, const char *name, void *slot, size_t slot_size) {
  void *symbol = dlsym(library, name);
  if (symbol == NULL) return -1;
  memcpy(slot, &symbol, slot_size);
  return 0;
}

etrt_status etrt_cuda_cublaslt_load(const char *const *names, size_t count,
                                    etrt_cublaslt_api *out) {
  memset(out, 0, sizeof *out);
  void *library = NULL;
  char tried[1024] = "";
  size_t used = 0;
  for (size_t i = 0; i < count && library == NULL; ++i) {
    library = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (library == NULL && used < sizeof tried) {
      const char *why = dlerror();
      int n = snprintf(tried + used, sizeof tried - used, "%s%s", used ? "; " : "",
                       why ? why : names[i]);
      if (n > 0) used += (size_t)n;
    }
  }
  if (library == NULL) {
    return etrt_error(ETRT_ERROR_UNSUPPORTED,
                      "cannot load cuBLASLt (%s), which GPU plans need for matrix products: %s",
                      ETRT_CUBLASLT_SONAME, tried);
  }
  struct {
    const char *name;
    void *slot;
    size_t size;
  } symbols[] = {
      {"cublasLtCreate", &out->create, sizeof out->create},
      {"cublasLtDestroy", &out->destroy, sizeof out->destroy},
      {"cublasLtGetStatusName", &out->status_name, sizeof out->status_name},
      {"cublasLtMatmulDescInit_internal", &out->matmul_desc_init, sizeof out->matmul_desc_init},
      {"cublasLtMatmulDescSetAttribute", &out->matmul_desc_set_attribute,
       sizeof out->matmul_desc_set_attribute},
      {"cublasLtMatrixLayoutInit_internal", &out->matrix_layout_init,
       sizeof out->matrix_layout_init},
      {"cublasLtMatrixLayoutSetAttribute", &out->matrix_layout_set_attribute,
       sizeof out->matrix_layout_set_attribute},
      {"cublasLtMatmulPreferenceInit_internal", &out->preference_init, sizeof out->preference_init},
      {"cublasLtMatmulPreferenceSetAttribute", &out->preference_set_attribute,
       sizeof out->preference_set_attribute},
      {"cublasLtMatmulAlgoGetHeuristic", &out->algo_get_heuristic, sizeof out->algo_get_heuristic},
      {"cublasLtMatmul", &out->matmul, sizeof out->matmul},
  };
  for (size_t i = 0; i < sizeof symbols / sizeof symbols[0]; ++i) {
    if (etrt_cublaslt_symbol(library, symbols[i].name, symbols[i].slot, symbols[i].size) != 0) {
      const char *why = dlerror();
      memset(out, 0, sizeof *out);
      return etrt_error(ETRT_ERROR_UNSUPPORTED, "cuBLASLt (%s) lacks %s: %s", ETRT_CUBLASLT_SONAME,
                        symbols[i].name, why ? why : "no such symbol");
    }
  }
  return ETRT_OK;
}

static pthread_once_t etrt_cublaslt_once = PTHREAD_ONCE_INIT;
static etrt_cublaslt_api etrt_cublaslt_table;
static etrt_status etrt_cublaslt_status;
static char etrt_cublaslt_message[1024];

static void etrt_cublaslt_init(void) {
  static const char *const names[] = {
      ETRT_CUBLASLT_SONAME,
#ifdef ETRT_CUDA_LIBRARY_DIR
      ETRT_CUDA_LIBRARY_DIR "/" ETRT_CUBLASLT_SONAME,
#endif
  };
  etrt_cublaslt_status =
      etrt_cuda_cublaslt_load(names, sizeof names / sizeof names[0], &etrt_cublaslt_table);
  if (etrt_cublaslt_status != ETRT_OK)
    snprintf(etrt_cublaslt_message, sizeof etrt_cublaslt_message, "%s", etrt_last_error());
}

etrt_status etrt_cuda_cublaslt_get(const etrt_cublaslt_api **out) {
  *out = NULL;
  pthread_once(&etrt_cublaslt_once, etrt_cublaslt_init);
  /* The message is per thread: every caller that finds the library missing gets it. */
  if (etrt_cublaslt_status != ETRT_OK)
    return etrt_error(etrt_cublaslt_status, "%s", etrt_cublaslt_message);
  *out = &etrt_cublaslt_table;
  return ETRT_OK;
}

const char *etrt_cuda_library_optional(void *library, const etrt_library_symbol *symbols,
                                       size_t count) {
  for (size_t i = 0; i < count; ++i) {
    if (etrt_cublaslt_symbol(library, symbols[i].name, symbols[i].slot, symbols[i].size) != 0) {
      (void)dlerror();
      for (size_t k = 0; k < count; ++k) memset(symbols[k].slot, 0, symbols[k].size);
      return symbols[i].name;
    }
  }
  return NULL;
}

/* Opens the first of `names` and fills `symbols` from it; on failure names the
 * library (`what`, `soname`), the loader's reasons and the missing entry point. Then
 * fills `optional`, all or none: where one is missing every slot of them is zeroed
 * (logged at debug level) and the load still succeeds. */
static etrt_status etrt_library_load(const char *what, const char *soname, const char *const *names,
                                     size_t count, const etrt_library_symbol *symbols,
                                     size_t symbol_count, const etrt_library_symbol *optional,
                                     size_t optional_count) {
  void *library = NULL;
  char tried[1024] = "";
  size_t used = 0;
  for (size_t i = 0; i < count && library == NULL; ++i) {
    library = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (library == NULL && used < sizeof tried) {
      const char *why = dlerror();
      int n = snprintf(tried + used, sizeof tried - used, "%s%s", used ? "; " : "",
                       why ? why : names[i]);
      if (n > 0) used += (size_t)n;
    }
  }
  if (library == NULL)
    return etrt_error(ETRT_ERROR_UNSUPPORTED, "cannot load %s (%s): %s", what, soname, tried);
  for (size_t i = 0; i < symbol_count; ++i) {
    if (etrt_cublaslt_symbol(library, symbols[i].name, symbols[i].slot, symbols[i].size) != 0) {
      const char *why = dlerror();
      return etrt_error(ETRT_ERROR_UNSUPPORTED, "%s (%s) lacks %s: %s", what, soname,
                        symbols[i].name, why ? why : "no such symbol");
    }
  }
  const char *missing = etrt_cuda_library_optional(library, optional, optional_count);
  if (missing != NULL)
    etrt_log(ETRT_LOG_DEBUG, "%s (%s) lacks %s: going without its entry points from %s", what,
             soname, missing, optional[0].name);
  return ETRT_OK;
}

static pthread_once_t etrt_cudnn_once = PTHREAD_ONCE_INIT;
static etrt_cudnn_api etrt_cudnn_table;
static etrt_status etrt_cudnn_status;
static char etrt_cudnn_message[1024];

static void etrt_cudnn_init(void) {
  static const char *const names[] = {
      ETRT_CUDNN_SONAME,
#ifdef ETRT_CUDA_LIBRARY_DIR
      ETRT_CUDA_LIBRARY_DIR "/" ETRT_CUDNN_SONAME,
#endif
  };
  etrt_cudnn_api *t = &etrt_cudnn_table;
  const etrt_library_symbol symbols[] = {
      {"cudnnCreate", &t->create, sizeof t->create},
      {"cudnnDestroy", &t->destroy, sizeof t->destroy},
      {"cudnnSetStream", &t->set_stream, sizeof t->set_stream},
      {"cudnnGetErrorString", &t->error_string, sizeof t->error_string},
      {"cudnnCreateTensorDescriptor", &t->create_tensor, sizeof t->create_tensor},
      {"cudnnSetTensorNdDescriptor", &t->set_tensor, sizeof t->set_tensor},
      {"cudnnDestroyTensorDescriptor", &t->destroy_tensor, sizeof t->destroy_tensor},
      {"cudnnCreateFilterDescriptor", &t->create_filter, sizeof t->create_filter},
      {"cudnnSetFilterNdDescriptor", &t->set_filter, sizeof t->set_filter},
      {"cudnnDestroyFilterDescriptor", &t->destroy_filter, sizeof t->destroy_filter},
      {"cudnnCreateConvolutionDescriptor", &t->create_conv, sizeof t->create_conv},
      {"cudnnSetConvolutionNdDescriptor", &t->set_conv, sizeof t->set_conv},
      {"cudnnSetConvolutionGroupCount", &t->set_conv_groups, sizeof t->set_conv_groups},
      {"cudnnSetConvolutionMathType", &t->set_conv_math, sizeof t->set_conv_math},
      {"cudnnDestroyConvolutionDescriptor", &t->destroy_conv, sizeof t->destroy_conv},
      {"cudnnCreateActivationDescriptor", &t->create_activation, sizeof t->create_activation},
      {"cudnnSetActivationDescriptor", &t->set_activation, sizeof t->set_activation},
      {"cudnnDestroyActivationDescriptor", &t->destroy_activation, sizeof t->destroy_activation},
      {"cudnnFindConvolutionForwardAlgorithm", &t->find_forward, sizeof t->find_forward},
      {"cudnnGetConvolutionForwardAlgorithm_v7", &t->heuristic_forward,
       sizeof t->heuristic_forward},
      {"cudnnGetConvolutionForwardWorkspaceSize", &t->forward_workspace,
       sizeof t->forward_workspace},
      {"cudnnConvolutionBiasActivationForward", &t->bias_activation_forward,
       sizeof t->bias_activation_forward},
      {"cudnnConvolutionForward", &t->convolution_forward, sizeof t->convolution_forward},
      {"cudnnGetVersion", &t->get_version, sizeof t->get_version},
  };
  const etrt_library_symbol backend[] = {
      {"cudnnBackendCreateDescriptor", &t->backend_create, sizeof t->backend_create},
      {"cudnnBackendDestroyDescriptor", &t->backend_destroy, sizeof t->backend_destroy},
      {"cudnnBackendSetAttribute", &t->backend_set, sizeof t->backend_set},
      {"cudnnBackendGetAttribute", &t->backend_get, sizeof t->backend_get},
      {"cudnnBackendFinalize", &t->backend_finalize, sizeof t->backend_finalize},
      {"cudnnBackendExecute", &t->backend_execute, sizeof t->backend_execute},
  };
  etrt_cudnn_status = etrt_library_load(
      "cuDNN", ETRT_CUDNN_SONAME, names, sizeof names / sizeof names[0], symbols,
      sizeof symbols / sizeof symbols[0], backend, sizeof backend / sizeof backend[0]);
  if (etrt_cudnn_status != ETRT_OK) {
    memset(t, 0, sizeof *t);
    snprintf(etrt_cudnn_message, sizeof etrt_cudnn_message, "%s", etrt_last_error());
  }
}

etrt_status etrt_cuda_cudnn_get(const etrt_cudnn_api **out) {
  *out = NULL;
  pthread_once(&etrt_cudnn_once, etrt_cudnn_init);
  if (etrt_cudnn_status != ETRT_OK) return etrt_error(etrt_cudnn_status, "%s", etrt_cudnn_message);
  *out = &etrt_cudnn_table;
  return ETRT_OK;
}

uint32_t etrt_cuda_cudnn_version(void) {
  const etrt_cudnn_api *api = NULL;
  if (etrt_cuda_cudnn_get(&api) != ETRT_OK) {
    etrt_clear_error();
    return 0;
  }
  return (uint32_t)api->get_version();
}

#else
/* ISO C forbids an empty translation unit. */
typedef int etrt_cuda_libraries_unused;
#endif
