/* The CPython binding of etrt, over the public C API only and against the stable ABI
 * (one wheel for every CPython from 3.11). Kept thin: programs, one run with DLPack
 * inputs and outputs, the log sink, errors, and the network builder and support
 * queries that the ExecuTorch backend's Python side (etrt/executorch.py) drives. */
#define Py_LIMITED_API 0x030B0000
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "etrt/etrt.h"

/* --- DLPack (the ABI of dlpack.h 0.8, which every producer still exports) -------- */
typedef struct {
  int32_t device_type;
  int32_t device_id;
} etrt_py_dl_device;
typedef struct {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
} etrt_py_dl_dtype;
typedef struct {
  void *data;
  etrt_py_dl_device device;
  int32_t ndim;
  etrt_py_dl_dtype dtype;
  int64_t *shape;
  int64_t *strides;
  uint64_t byte_offset;
} etrt_py_dl_tensor;
typedef struct etrt_py_dl_managed {
  etrt_py_dl_tensor dl_tensor;
  void *manager_ctx;
  void (*deleter)(struct etrt_py_dl_managed *self);
} etrt_py_dl_managed;

enum { ETRT_PY_DL_CPU = 1, ETRT_PY_DL_CUDA = 2, ETRT_PY_DL_CUDA_HOST = 3 };
enum {
  ETRT_PY_DL_INT = 0,
  ETRT_PY_DL_UINT = 1,
  ETRT_PY_DL_FLOAT = 2,
  ETRT_PY_DL_BFLOAT = 4,
  ETRT_PY_DL_BOOL = 6
};

static const struct {
  etrt_dtype dtype;
  uint8_t code, bits;
} etrt_py_dtypes[] = {
    {ETRT_DTYPE_FLOAT32, ETRT_PY_DL_FLOAT, 32}, {ETRT_DTYPE_FLOAT16, ETRT_PY_DL_FLOAT, 16},
    {ETRT_DTYPE_FLOAT64, ETRT_PY_DL_FLOAT, 64}, {ETRT_DTYPE_BFLOAT16, ETRT_PY_DL_BFLOAT, 16},
    {ETRT_DTYPE_INT8, ETRT_PY_DL_INT, 8},       {ETRT_DTYPE_INT16, ETRT_PY_DL_INT, 16},
    {ETRT_DTYPE_INT32, ETRT_PY_DL_INT, 32},     {ETRT_DTYPE_INT64, ETRT_PY_DL_INT, 64},
    {ETRT_DTYPE_UINT8, ETRT_PY_DL_UINT, 8},     {ETRT_DTYPE_UINT16, ETRT_PY_DL_UINT, 16},
    {ETRT_DTYPE_UINT32, ETRT_PY_DL_UINT, 32},   {ETRT_DTYPE_UINT64, ETRT_PY_DL_UINT, 64},
    {ETRT_DTYPE_BOOL, ETRT_PY_DL_BOOL, 8},
};
#define ETRT_PY_DTYPE_COUNT (sizeof etrt_py_dtypes / sizeof etrt_py_dtypes[0])

/* --- errors ---------------------------------------------------------------------- */
static PyObject *etrt_py_error;      /* etrt.Error */
static PyObject *etrt_py_errors[11]; /* by etrt_status; NULL: etrt.Error */

static PyObject *etrt_py_raise_status(etrt_status status) {
  PyObject *type = (unsigned)status < 11 && etrt_py_errors[status] != NULL ? etrt_py_errors[status]
                                                                           : etrt_py_error;
  const char *message = etrt_last_error();
  PyErr_SetString(type, message[0] != '\0' ? message : etrt_status_name(status));
  return NULL;
}

static PyObject *etrt_py_raise(etrt_status status, const char *fmt, ...) {
  char message[512];
  va_list args;
  va_start(args, fmt);
  vsnprintf(message, sizeof message, fmt, args);
  va_end(args);
  PyErr_SetString((unsigned)status < 11 && etrt_py_errors[status] != NULL ? etrt_py_errors[status]
                                                                          : etrt_py_error,
                  message);
  return NULL;
}

/* --- logging: etrt's sink calls a Python callable (etrt/__init__.py hands it the
 * `etrt` logger), from whatever thread logs, holding the GIL for the call. -------- */
static PyObject *etrt_py_log_handler;

static void etrt_py_log_sink(etrt_log_level level, const char *message, void *user) {
  (void)user;
  PyGILState_STATE gil = PyGILState_Ensure();
  if (etrt_py_log_handler != NULL) {
    PyObject *r = PyObject_CallFunction(etrt_py_log_handler, "is", (int)level, message);
    if (r == NULL) PyErr_Clear(); /* a failing handler must not fail etrt's call */
    Py_XDECREF(r);
  }
  PyGILState_Release(gil);
}

static PyObject *etrt_py_set_log_handler(PyObject *self, PyObject *args) {
  PyObject *handler, *level;
  if (!PyArg_ParseTuple(args, "OO", &handler, &level)) return NULL;
  PyObject *old = etrt_py_log_handler;
  etrt_py_log_handler = handler == Py_None ? NULL : Py_NewRef(handler);
  Py_XDECREF(old);
  if (level != Py_None) etrt_log_set_level((etrt_log_level)PyLong_AsLong(level));
  if (PyErr_Occurred()) return NULL;
  if (etrt_py_log_handler != NULL)
    etrt_log_set_sink(etrt_py_log_sink, NULL);
  else
    etrt_log_set_sink(NULL, NULL);
  Py_RETURN_NONE;
}

/* --- Tensor: one output of a run, holding the run's method (the bytes' owner) ------ */
typedef struct {
  PyObject_HEAD etrt_method *method;
  PyObject *program; /* the Program the method was created from, which it reads */
  char *name;        /* the method's name, for the program's pool */
} etrt_py_run;

static void etrt_py_program_pool_put(PyObject *program, char *name, etrt_method *method);

typedef struct {
  PyObject_HEAD PyObject *run; /* etrt_py_run that owns the bytes */
  void *data;
  etrt_dtype dtype;
  int32_t rank;
  int64_t sizes[ETRT_MAX_RANK];
  etrt_device device;
} etrt_py_tensor;

static PyObject *etrt_py_run_type, *etrt_py_tensor_type, *etrt_py_program_type,
    *etrt_py_network_type;

static void etrt_py_run_dealloc(PyObject *self) {
  etrt_py_run *r = (etrt_py_run *)self;
  /* The outputs are gone: the instance goes back to its program for the next run. */
  if (r->method != NULL && r->program != NULL)
    etrt_py_program_pool_put(r->program, r->name, r->method);
  else if (r->method != NULL)
    etrt_method_destroy(r->method);
  if (r->method == NULL || r->program == NULL) free(r->name);
  Py_XDECREF(r->program);
  PyTypeObject *type = Py_TYPE(self);
  ((freefunc)PyType_GetSlot(type, Py_tp_free))(self);
  Py_DECREF(type);
}

static PyType_Slot etrt_py_run_slots[] = {{Py_tp_dealloc, (void *)etrt_py_run_dealloc}, {0, NULL}};
static PyType_Spec etrt_py_run_spec = {"etrt._etrt.Run", sizeof(etrt_py_run), 0,
                                       Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION,
                                       etrt_py_run_slots};

/* An instance of a type Python code may not instantiate (its fields are etrt's). */
static PyObject *etrt_py_alloc(PyObject *type) {
  allocfunc alloc = (allocfunc)PyType_GetSlot((PyTypeObject *)type, Py_tp_alloc);
  return alloc((PyTypeObject *)type, 0);
}

static void etrt_py_tensor_dealloc(PyObject *self) {
  Py_XDECREF(((etrt_py_tensor *)self)->run);
  PyTypeObject *type = Py_TYPE(self);
  ((freefunc)PyType_GetSlot(type, Py_tp_free))(self);
  Py_DECREF(type);
}

typedef struct {
  etrt_py_dl_managed managed;
  int64_t shape[ETRT_MAX_RANK];
} etrt_py_export;

static void etrt_py_export_delete(etrt_py_dl_managed *managed) {
  PyGILState_STATE gil = PyGILState_Ensure();
  Py_XDECREF((PyObject *)managed->manager_ctx);
  PyGILState_Release(gil);
  free(managed);
}

static void etrt_py_capsule_destroy(PyObject *capsule) {
  /* Still named "dltensor": no consumer took it, so its deleter is ours to call. */
  if (!PyCapsule_IsValid(capsule, "dltensor")) return;
  etrt_py_dl_managed *managed = PyCapsule_GetPointer(capsule, "dltensor");
  if (managed != NULL && managed->deleter != NULL) managed->deleter(managed);
}

/* The run completed before run() returned (etrt_method_execute waits for the outputs),
 * so a consumer's stream needs no event whatever `stream` it names. */
static PyObject *etrt_py_tensor_dlpack(PyObject *self, PyObject *args, PyObject *kwargs) {
  etrt_py_tensor *t = (etrt_py_tensor *)self;
  etrt_py_export *e = calloc(1, sizeof *e);
  if (e == NULL) return PyErr_NoMemory();
  etrt_py_dl_tensor *dl = &e->managed.dl_tensor;
  dl->data = t->data;
  dl->device.device_type = t->device.type == ETRT_DEVICE_CUDA ? ETRT_PY_DL_CUDA : ETRT_PY_DL_CPU;
  dl->device.device_id = t->device.index;
  dl->ndim = t->rank;
  for (size_t i = 0; i < ETRT_PY_DTYPE_COUNT; ++i) {
    if (etrt_py_dtypes[i].dtype == t->dtype) {
      dl->dtype.code = etrt_py_dtypes[i].code;
      dl->dtype.bits = etrt_py_dtypes[i].bits;
    }
  }
  dl->dtype.lanes = 1;
  memcpy(e->shape, t->sizes, sizeof e->shape);
  dl->shape = e->shape;
  dl->strides = NULL; /* row-major */
  e->managed.manager_ctx = Py_NewRef(self);
  e->managed.deleter = etrt_py_export_delete;
  PyObject *capsule = PyCapsule_New(&e->managed, "dltensor", etrt_py_capsule_destroy);
  if (capsule == NULL) etrt_py_export_delete(&e->managed);
  return capsule;
}

static PyObject *etrt_py_tensor_dlpack_device(PyObject *self, PyObject *unused) {
  etrt_py_tensor *t = (etrt_py_tensor *)self;
  return Py_BuildValue("(ii)",
                       t->device.type == ETRT_DEVICE_CUDA ? ETRT_PY_DL_CUDA : ETRT_PY_DL_CPU,
                       (int)t->device.index);
}

static PyObject *etrt_py_tensor_get_shape(PyObject *self, void *closure) {
  etrt_py_tensor *t = (etrt_py_tensor *)self;
  PyObject *shape = PyTuple_New(t->rank);
  for (int32_t i = 0; shape != NULL && i < t->rank; ++i)
    PyTuple_SetItem(shape, i, PyLong_FromLongLong(t->sizes[i]));
  return shape;
}

static PyObject *etrt_py_tensor_get_dtype(PyObject *self, void *closure) {
  return PyUnicode_FromString(etrt_dtype_name(((etrt_py_tensor *)self)->dtype));
}

static PyObject *etrt_py_tensor_get_device(PyObject *self, void *closure) {
  char buf[32];
  return PyUnicode_FromString(
      etrt_device_format(((etrt_py_tensor *)self)->device, buf, sizeof buf));
}

static PyObject *etrt_py_tensor_get_data_ptr(PyObject *self, void *closure) {
  return PyLong_FromVoidPtr(((etrt_py_tensor *)self)->data);
}

static PyMethodDef etrt_py_tensor_methods[] = {
    {"__dlpack__", (PyCFunction)(void (*)(void))etrt_py_tensor_dlpack, METH_VARARGS | METH_KEYWORDS,
     "A DLPack capsule of the tensor (no copy)."},
    {"__dlpack_device__", etrt_py_tensor_dlpack_device, METH_NOARGS,
     "(device type, device index) as DLPack numbers them."},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef etrt_py_tensor_getset[] = {
    {"shape", etrt_py_tensor_get_shape, NULL, "sizes", NULL},
    {"dtype", etrt_py_tensor_get_dtype, NULL, "element type name", NULL},
    {"device", etrt_py_tensor_get_device, NULL, "\"cpu\" or \"cuda:N\"", NULL},
    {"data_ptr", etrt_py_tensor_get_data_ptr, NULL, "address of the first element", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PyType_Slot etrt_py_tensor_slots[] = {
    {Py_tp_dealloc, (void *)etrt_py_tensor_dealloc},
    {Py_tp_methods, etrt_py_tensor_methods},
    {Py_tp_getset, etrt_py_tensor_getset},
    {Py_tp_doc, "An output of Program.run, exported through DLPack without a copy."},
    {0, NULL}};
static PyType_Spec etrt_py_tensor_spec = {"etrt.Tensor", sizeof(etrt_py_tensor), 0,
                                          Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION,
                                          etrt_py_tensor_slots};

/* --- Program ---------------------------------------------------------------------- */
/* Method instances whose outputs were all released, kept for the next run of the same
 * method: a run then allocates nothing, and per-instance one-shot notices (the staging
 * log) stay one-shot. Guarded by the GIL. */
#define ETRT_PY_POOL 8

typedef struct {
  PyObject_HEAD etrt_program *program;
  int force_cpu; /* every plan runs on the CPU: all memory is host memory */
  etrt_method *pool[ETRT_PY_POOL];
  char *pool_names[ETRT_PY_POOL];
} etrt_py_program;

/* Takes ownership of name and method. */
static void etrt_py_program_pool_put(PyObject *self, char *name, etrt_method *method) {
  etrt_py_program *p = (etrt_py_program *)self;
  for (int i = 0; i < ETRT_PY_POOL; ++i) {
    if (p->pool[i] == NULL) {
      p->pool[i] = method;
      p->pool_names[i] = name;
      return;
    }
  }
  etrt_method_destroy(method);
  free(name);
}

/* An idle instance of `name`, or NULL; the caller owns both the method and *name_out. */
static etrt_method *etrt_py_program_pool_take(etrt_py_program *p, const char *name,
                                              char **name_out) {
  for (int i = 0; i < ETRT_PY_POOL; ++i) {
    if (p->pool[i] != NULL && strcmp(p->pool_names[i], name) == 0) {
      etrt_method *method = p->pool[i];
      *name_out = p->pool_names[i];
      p->pool[i] = NULL;
      p->pool_names[i] = NULL;
      return method;
    }
  }
  return NULL;
}

static int etrt_py_program_init(PyObject *self, PyObject *args, PyObject *kwargs) {
  static char *keywords[] = {"path", "data", "allow_cpu_fallback", "force_cpu", NULL};
  const char *path, *data = NULL;
  int fallback = 0, force_cpu = 0;
  if (!PyArg_ParseTupleAndKeywords(args, kwargs, "s|zpp", keywords, &path, &data, &fallback,
                                   &force_cpu))
    return -1;
  etrt_program_options options = {
      .data_path = data, .allow_cpu_fallback = fallback, .force_cpu = force_cpu};
  etrt_program *program = NULL;
  etrt_status status;
  Py_BEGIN_ALLOW_THREADS status = etrt_program_load_file(path, &options, &program);
  Py_END_ALLOW_THREADS if (status != ETRT_OK) {
    etrt_py_raise_status(status);
    return -1;
  }
  etrt_py_program *p = (etrt_py_program *)self;
  if (p->program != NULL) etrt_program_destroy(p->program);
  p->program = program;
  p->force_cpu = force_cpu;
  return 0;
}

static void etrt_py_program_dealloc(PyObject *self) {
  etrt_py_program *p = (etrt_py_program *)self;
  for (int i = 0; i < ETRT_PY_POOL; ++i) {
    if (p->pool[i] != NULL) etrt_method_destroy(p->pool[i]);
    free(p->pool_names[i]);
  }
  if (p->program != NULL) etrt_program_destroy(p->program);
  PyTypeObject *type = Py_TYPE(self);
  ((freefunc)PyType_GetSlot(type, Py_tp_free))(self);
  Py_DECREF(type);
}

static etrt_program *etrt_py_program_get(PyObject *self) {
  etrt_program *program = ((etrt_py_program *)self)->program;
  if (program == NULL) etrt_py_raise(ETRT_ERROR_STATE, "the program is not loaded");
  return program;
}

static PyObject *etrt_py_program_method_names(PyObject *self, PyObject *unused) {
  etrt_program *program = etrt_py_program_get(self);
  if (program == NULL) return NULL;
  uint32_t count = etrt_program_method_count(program);
  PyObject *names = PyList_New(count);
  for (uint32_t i = 0; names != NULL && i < count; ++i)
    PyList_SetItem(names, i, PyUnicode_FromString(etrt_program_method_name(program, i)));
  return names;
}

static PyObject *etrt_py_info(const etrt_tensor_info *info) {
  char device[32];
  PyObject *sizes = PyTuple_New(info->rank > 0 ? info->rank : 0);
  for (int32_t i = 0; sizes != NULL && i < info->rank; ++i)
    PyTuple_SetItem(sizes, i, PyLong_FromLongLong(info->sizes[i]));
  if (sizes == NULL) return NULL;
  return Py_BuildValue("{s:s,s:N,s:O,s:s,s:O}", "dtype", etrt_dtype_name(info->dtype), "shape",
                       sizes, "dynamic", info->dynamic ? Py_True : Py_False, "device",
                       etrt_device_format(info->device, device, sizeof device), "is_tensor",
                       info->is_tensor ? Py_True : Py_False);
}

/* io(method) -> ([input info], [output info]) */
static PyObject *etrt_py_program_io(PyObject *self, PyObject *args) {
  const char *name;
  if (!PyArg_ParseTuple(args, "s", &name)) return NULL;
  etrt_program *program = etrt_py_program_get(self);
  if (program == NULL) return NULL;
  uint32_t n_in, n_out;
  etrt_status status = etrt_program_method_io(program, name, &n_in, &n_out);
  if (status != ETRT_OK) return etrt_py_raise_status(status);
  PyObject *ins = PyList_New(n_in), *outs = PyList_New(n_out);
  for (uint32_t k = 0; ins != NULL && outs != NULL && k < n_in + n_out; ++k) {
    etrt_tensor_info info;
    status = k < n_in ? etrt_program_input_info(program, name, k, &info)
                      : etrt_program_output_info(program, name, k - n_in, &info);
    if (status != ETRT_OK) {
      Py_DECREF(ins);
      Py_DECREF(outs);
      return etrt_py_raise_status(status);
    }
    PyObject *item = etrt_py_info(&info);
    if (item == NULL) break;
    PyList_SetItem(k < n_in ? ins : outs, k < n_in ? k : k - n_in, item);
  }
  if (ins == NULL || outs == NULL || PyErr_Occurred()) {
    Py_XDECREF(ins);
    Py_XDECREF(outs);
    return NULL;
  }
  return Py_BuildValue("(NN)", ins, outs);
}

/* A consumed input capsule's tensor, handed back to its producer after the run. */
static void etrt_py_release_inputs(etrt_py_dl_managed **taken, Py_ssize_t count) {
  for (Py_ssize_t i = 0; i < count; ++i) {
    if (taken[i] != NULL && taken[i]->deleter != NULL) taken[i]->deleter(taken[i]);
  }
}

/* Checks one DLPack input against what the program declares, and fills the view. */
static int etrt_py_input_view(const etrt_program *program, const char *method, uint32_t index,
                              const etrt_py_dl_tensor *dl, etrt_tensor_view *view) {
  etrt_tensor_info info;
  etrt_status status = etrt_program_input_info(program, method, index, &info);
  if (status != ETRT_OK) {
    etrt_py_raise_status(status);
    return -1;
  }
  if (dl->device.device_type != ETRT_PY_DL_CPU && dl->device.device_type != ETRT_PY_DL_CUDA &&
      dl->device.device_type != ETRT_PY_DL_CUDA_HOST) {
    etrt_py_raise(ETRT_ERROR_INVALID_ARGUMENT,
                  "input %u: a tensor on DLPack device type %d; etrt takes CPU and CUDA tensors",
                  index, (int)dl->device.device_type);
    return -1;
  }
  char planned[32];
  etrt_device_format(info.device, planned, sizeof planned);
  if (dl->device.device_type == ETRT_PY_DL_CUDA &&
      (info.device.type != ETRT_DEVICE_CUDA || info.device.index != dl->device.device_id)) {
    etrt_py_raise(ETRT_ERROR_INVALID_ARGUMENT,
                  "input %u: a tensor on cuda:%d, but method '%s' plans this input on %s (move "
                  "it there, or build the program with io=\"device\" for that GPU)",
                  index, (int)dl->device.device_id, method, planned);
    return -1;
  }
  if (dl->dtype.lanes != 1) {
    etrt_py_raise(ETRT_ERROR_INVALID_ARGUMENT, "input %u: vector dtypes (%u lanes) are refused",
                  index, (unsigned)dl->dtype.lanes);
    return -1;
  }
  view->dtype = ETRT_DTYPE_INVALID;
  for (size_t i = 0; i < ETRT_PY_DTYPE_COUNT; ++i) {
    if (etrt_py_dtypes[i].code == dl->dtype.code && etrt_py_dtypes[i].bits == dl->dtype.bits)
      view->dtype = etrt_py_dtypes[i].dtype;
  }
  if (view->dtype != info.dtype) {
    etrt_py_raise(
        ETRT_ERROR_INVALID_ARGUMENT, "input %u: dtype %s, but method '%s' takes %s", index,
        view->dtype == ETRT_DTYPE_INVALID ? "(not one etrt has)" : etrt_dtype_name(view->dtype),
        method, etrt_dtype_name(info.dtype));
    return -1;
  }
  if (dl->ndim < 0 || dl->ndim > ETRT_MAX_RANK) {
    etrt_py_raise(ETRT_ERROR_INVALID_ARGUMENT, "input %u: rank %d (etrt takes at most %d)", index,
                  (int)dl->ndim, ETRT_MAX_RANK);
    return -1;
  }
  /* Row-major and dense: axes of size 1 may carry any stride. */
  int64_t expected = 1;
  for (int32_t a = dl->ndim - 1; a >= 0; --a) {
    if (dl->strides != NULL && dl->shape[a] != 1 && dl->strides[a] != expected) {
      etrt_py_raise(ETRT_ERROR_INVALID_ARGUMENT,
                    "input %u: strides the program cannot take (axis %d has stride %lld, a "
                    "contiguous tensor has %lld): pass a contiguous tensor",
                    index, (int)a, (long long)dl->strides[a], (long long)expected);
      return -1;
    }
    expected *= dl->shape[a];
  }
  view->data = (char *)dl->data + dl->byte_offset;
  view->rank = dl->ndim;
  for (int32_t a = 0; a < dl->ndim; ++a) view->sizes[a] = dl->shape[a];
  return 0;
}

static PyObject *etrt_py_outputs(PyObject *run, const etrt_program *program, const char *name,
                                 int force_cpu) {
  etrt_method *method = ((etrt_py_run *)run)->method;
  uint32_t count = etrt_method_output_count(method);
  PyObject *outs = PyList_New(count);
  for (uint32_t i = 0; outs != NULL && i < count; ++i) {
    etrt_tensor_view view;
    etrt_tensor_info info;
    etrt_status status = etrt_method_get_output(method, i, &view);
    if (status == ETRT_OK) status = etrt_program_output_info(program, name, i, &info);
    if (status != ETRT_OK) {
      Py_DECREF(outs);
      return etrt_py_raise_status(status);
    }
    etrt_py_tensor *t = (etrt_py_tensor *)etrt_py_alloc(etrt_py_tensor_type);
    if (t == NULL) {
      Py_DECREF(outs);
      return NULL;
    }
    t->run = Py_NewRef(run);
    t->data = view.data;
    t->dtype = view.dtype;
    t->rank = view.rank;
    memcpy(t->sizes, view.sizes, sizeof t->sizes);
    /* Where the bytes are: planned GPU memory is host memory on the CPU fallback and
     * on simulated GPUs. */
    t->device = info.device;
    if (force_cpu || !etrt_support_device_memory_is_gpu(info.device))
      t->device = (etrt_device){ETRT_DEVICE_CPU, 0};
    PyList_SetItem(outs, i, (PyObject *)t);
  }
  return outs;
}

/* run(method, inputs, stream) -> [Tensor]. Each input is a DLPack capsule or an int;
 * each run gets a method instance of its own (an idle one from the pool, else a new
 * one), which its outputs keep alive, so an output
 * stays valid however many runs follow. */
static PyObject *etrt_py_program_run(PyObject *self, PyObject *args) {
  const char *name;
  PyObject *inputs, *stream_obj;
  if (!PyArg_ParseTuple(args, "sOO", &name, &inputs, &stream_obj)) return NULL;
  etrt_program *program = etrt_py_program_get(self);
  if (program == NULL) return NULL;
  PyObject *seq = PySequence_Fast(inputs, "inputs must be a sequence");
  if (seq == NULL) return NULL;
  Py_ssize_t count = PySequence_Size(seq);
  void *stream = NULL;
  int has_stream = stream_obj != Py_None;
  if (has_stream) stream = PyLong_AsVoidPtr(stream_obj);
  etrt_py_run *run = NULL;
  PyObject *result = NULL;
  etrt_py_dl_managed **taken = calloc((size_t)count + 1, sizeof *taken);
  if (taken == NULL || PyErr_Occurred()) goto done;
  run = (etrt_py_run *)etrt_py_alloc(etrt_py_run_type);
  if (run == NULL) goto done;
  etrt_status status = ETRT_OK;
  run->method = etrt_py_program_pool_take((etrt_py_program *)self, name, &run->name);
  if (run->method == NULL) {
    run->name = strdup(name);
    if (run->name == NULL) {
      PyErr_NoMemory();
      goto done;
    }
    status = etrt_method_create(program, name, &run->method);
    if (status != ETRT_OK) {
      etrt_py_raise_status(status);
      goto done;
    }
  }
  run->program = Py_NewRef(self);
  if ((uint32_t)count != etrt_method_input_count(run->method)) {
    etrt_py_raise(ETRT_ERROR_INVALID_ARGUMENT, "method '%s' takes %u input(s), %zd given", name,
                  etrt_method_input_count(run->method), count);
    goto done;
  }
  for (Py_ssize_t i = 0; i < count; ++i) {
    PyObject *item = PySequence_GetItem(seq, i);
    if (item == NULL) goto done;
    if (PyLong_Check(item)) {
      long long value = PyLong_AsLongLong(item);
      Py_DECREF(item);
      if (PyErr_Occurred()) goto done;
      status = etrt_method_set_input_int(run->method, (uint32_t)i, value);
    } else {
      etrt_py_dl_managed *managed =
          PyCapsule_IsValid(item, "dltensor") ? PyCapsule_GetPointer(item, "dltensor") : NULL;
      if (managed == NULL) {
        Py_DECREF(item);
        etrt_py_raise(ETRT_ERROR_INVALID_ARGUMENT,
                      "input %zd: not a tensor (give an object with __dlpack__, or an int)", i);
        goto done;
      }
      /* Consumed: the producer's deleter is ours to call once the run is over. */
      PyCapsule_SetName(item, "used_dltensor");
      taken[i] = managed;
      Py_DECREF(item);
      etrt_tensor_view view;
      if (etrt_py_input_view(program, name, (uint32_t)i, &managed->dl_tensor, &view) != 0)
        goto done;
      status = etrt_method_set_input(run->method, (uint32_t)i, &view);
    }
    if (status != ETRT_OK) {
      etrt_py_raise_status(status);
      goto done;
    }
  }
  etrt_method *method = run->method;
  Py_BEGIN_ALLOW_THREADS if (has_stream) status = etrt_stream_push(stream);
  if (status == ETRT_OK) {
    status = etrt_method_execute(method);
    if (has_stream) etrt_stream_pop();
  }
  Py_END_ALLOW_THREADS if (status != ETRT_OK) {
    etrt_py_raise_status(status);
    goto done;
  }
  result = etrt_py_outputs((PyObject *)run, program, name, ((etrt_py_program *)self)->force_cpu);
done:
  if (result == NULL && run != NULL && run->method != NULL) {
    /* A failed run's instance is not reused. */
    etrt_method_destroy(run->method);
    run->method = NULL;
  }
  if (taken != NULL) etrt_py_release_inputs(taken, count);
  free(taken);
  Py_XDECREF((PyObject *)run);
  Py_DECREF(seq);
  return result;
}

static PyMethodDef etrt_py_program_methods[] = {
    {"method_names", etrt_py_program_method_names, METH_NOARGS, "The program's method names."},
    {"io", etrt_py_program_io, METH_VARARGS, "io(method) -> (inputs, outputs) as declared."},
    {"run", etrt_py_program_run, METH_VARARGS, "run(method, inputs, stream) -> [Tensor]."},
    {NULL, NULL, 0, NULL}};

static PyType_Slot etrt_py_program_slots[] = {{Py_tp_init, (void *)etrt_py_program_init},
                                              {Py_tp_dealloc, (void *)etrt_py_program_dealloc},
                                              {Py_tp_methods, etrt_py_program_methods},
                                              {0, NULL}};
static PyType_Spec etrt_py_program_spec = {"etrt._etrt.Program", sizeof(etrt_py_program), 0,
                                           Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE,
                                           etrt_py_program_slots};

/* --- Network: the engine's network builder, for the ExecuTorch preprocess ---------- */
typedef struct {
  PyObject_HEAD etrt_network *network;
} etrt_py_network;

static int etrt_py_network_init(PyObject *self, PyObject *args, PyObject *kwargs) {
  etrt_py_network *n = (etrt_py_network *)self;
  if (n->network != NULL) return 0;
  etrt_status status = etrt_network_create(&n->network);
  if (status != ETRT_OK) {
    etrt_py_raise_status(status);
    return -1;
  }
  return 0;
}

static void etrt_py_network_dealloc(PyObject *self) {
  etrt_py_network *n = (etrt_py_network *)self;
  if (n->network != NULL) etrt_network_destroy(n->network);
  PyTypeObject *type = Py_TYPE(self);
  ((freefunc)PyType_GetSlot(type, Py_tp_free))(self);
  Py_DECREF(type);
}

static int etrt_py_dtype_arg(const char *text, etrt_dtype *out) {
  *out = etrt_dtype_from_name(text);
  if (*out == ETRT_DTYPE_INVALID) {
    etrt_py_raise(ETRT_ERROR_UNSUPPORTED, "dtype '%s' is not one etrt has", text);
    return -1;
  }
  return 0;
}

/* A sequence of at most ETRT_MAX_RANK ints into sizes; returns the count or -1. */
static int32_t etrt_py_sizes_arg(PyObject *obj, int64_t *sizes, const char *what) {
  PyObject *seq = PySequence_Fast(obj, "sizes must be a sequence");
  if (seq == NULL) return -1;
  Py_ssize_t count = PySequence_Size(seq);
  if (count > ETRT_MAX_RANK) {
    Py_DECREF(seq);
    etrt_py_raise(ETRT_ERROR_UNSUPPORTED, "%s: rank %zd (etrt takes at most %d)", what, count,
                  ETRT_MAX_RANK);
    return -1;
  }
  for (Py_ssize_t i = 0; i < count; ++i) {
    PyObject *item = PySequence_GetItem(seq, i);
    sizes[i] = item != NULL ? PyLong_AsLongLong(item) : -1;
    Py_XDECREF(item);
  }
  Py_DECREF(seq);
  return PyErr_Occurred() ? -1 : (int32_t)count;
}

static PyObject *etrt_py_network_add_input(PyObject *self, PyObject *args) {
  const char *name, *dtype_name;
  PyObject *min_obj, *max_obj;
  if (!PyArg_ParseTuple(args, "ssOO", &name, &dtype_name, &min_obj, &max_obj)) return NULL;
  etrt_dtype dtype;
  int64_t min_sizes[ETRT_MAX_RANK], max_sizes[ETRT_MAX_RANK];
  if (etrt_py_dtype_arg(dtype_name, &dtype) != 0) return NULL;
  int32_t rank = etrt_py_sizes_arg(min_obj, min_sizes, name);
  if (rank < 0 || etrt_py_sizes_arg(max_obj, max_sizes, name) != rank) {
    if (!PyErr_Occurred())
      etrt_py_raise(ETRT_ERROR_INVALID_ARGUMENT, "%s: bounds differ in rank", name);
    return NULL;
  }
  int32_t id;
  etrt_status status = etrt_network_add_input(((etrt_py_network *)self)->network, name, dtype, rank,
                                              min_sizes, max_sizes, &id);
  return status == ETRT_OK ? PyLong_FromLong(id) : etrt_py_raise_status(status);
}

static PyObject *etrt_py_network_add_constant(PyObject *self, PyObject *args) {
  const char *name, *dtype_name, *bytes;
  Py_ssize_t size;
  PyObject *sizes_obj;
  if (!PyArg_ParseTuple(args, "ssOy#", &name, &dtype_name, &sizes_obj, &bytes, &size)) return NULL;
  etrt_dtype dtype;
  int64_t sizes[ETRT_MAX_RANK];
  if (etrt_py_dtype_arg(dtype_name, &dtype) != 0) return NULL;
  int32_t rank = etrt_py_sizes_arg(sizes_obj, sizes, name);
  if (rank < 0) return NULL;
  etrt_tensor_view view = {.dtype = dtype, .rank = rank};
  memcpy(view.sizes, sizes, sizeof view.sizes);
  int64_t numel = etrt_tensor_view_numel(&view);
  if (numel < 0 || (size_t)size != (size_t)numel * etrt_dtype_size(dtype))
    return etrt_py_raise(ETRT_ERROR_INVALID_ARGUMENT,
                         "constant '%s': %zd bytes do not match its shape and dtype", name, size);
  int32_t id;
  etrt_status status = etrt_network_add_constant(((etrt_py_network *)self)->network, name, dtype,
                                                 rank, sizes, bytes, &id);
  return status == ETRT_OK ? PyLong_FromLong(id) : etrt_py_raise_status(status);
}

/* Attributes as (name, value) pairs: int, float, str, or a list of ints or floats
 * (a list with any float is floats). The strings and arrays live in `keep`. */
static int etrt_py_attribute(PyObject *pair, etrt_attribute *a, PyObject *keep, int64_t *ints,
                             float *floats) {
  PyObject *key, *value;
  if (!PyArg_ParseTuple(pair, "UO", &key, &value)) return -1;
  if (PyList_Append(keep, key) != 0) return -1;
  a->name = PyUnicode_AsUTF8AndSize(key, NULL);
  if (a->name == NULL) return -1;
  if (PyBool_Check(value) || PyLong_Check(value)) {
    a->kind = ETRT_ATTRIBUTE_INT;
    a->i = PyLong_AsLongLong(value);
  } else if (PyFloat_Check(value)) {
    a->kind = ETRT_ATTRIBUTE_FLOAT;
    a->f = (float)PyFloat_AsDouble(value);
  } else if (PyUnicode_Check(value)) {
    if (PyList_Append(keep, value) != 0) return -1;
    a->kind = ETRT_ATTRIBUTE_STRING;
    a->s = PyUnicode_AsUTF8AndSize(value, NULL);
  } else {
    PyObject *seq = PySequence_Fast(value, "an attribute is an int, float, str or a list");
    if (seq == NULL) return -1;
    Py_ssize_t count = PySequence_Size(seq);
    int any_float = 0;
    for (Py_ssize_t i = 0; i < count && i < 64; ++i) {
      PyObject *item = PySequence_GetItem(seq, i);
      any_float |= item != NULL && PyFloat_Check(item);
      if (item != NULL) {
        ints[i] = any_float ? 0 : PyLong_AsLongLong(item);
        floats[i] = (float)PyFloat_AsDouble(item);
      }
      Py_XDECREF(item);
    }
    Py_DECREF(seq);
    if (count > 64) {
      etrt_py_raise(ETRT_ERROR_UNSUPPORTED, "attribute '%s': more than 64 values", a->name);
      return -1;
    }
    a->kind = any_float ? ETRT_ATTRIBUTE_FLOATS : ETRT_ATTRIBUTE_INTS;
    a->count = count;
    a->ints = ints;
    a->floats = floats;
  }
  return PyErr_Occurred() ? -1 : 0;
}

static PyObject *etrt_py_network_add_op(PyObject *self, PyObject *args) {
  const char *op_type, *name;
  PyObject *inputs_obj, *attrs_obj;
  int num_outputs;
  if (!PyArg_ParseTuple(args, "ssOiO", &op_type, &name, &inputs_obj, &num_outputs, &attrs_obj))
    return NULL;
  if (num_outputs < 1 || num_outputs > 16)
    return etrt_py_raise(ETRT_ERROR_INVALID_ARGUMENT, "%s '%s': %d outputs", op_type, name,
                         num_outputs);
  PyObject *inputs = PySequence_Fast(inputs_obj, "inputs must be a sequence");
  PyObject *attrs = inputs != NULL ? PySequence_Fast(attrs_obj, "attributes: a sequence") : NULL;
  PyObject *keep = PyList_New(0), *result = NULL;
  Py_ssize_t n_in = inputs != NULL ? PySequence_Size(inputs) : 0;
  Py_ssize_t n_attr = attrs != NULL ? PySequence_Size(attrs) : 0;
  int32_t *ids = calloc((size_t)n_in + 1, sizeof *ids);
  etrt_attribute *attributes = calloc((size_t)n_attr + 1, sizeof *attributes);
  int64_t *ints = calloc(((size_t)n_attr + 1) * 64, sizeof *ints);
  float *floats = calloc(((size_t)n_attr + 1) * 64, sizeof *floats);
  int32_t outputs[16];
  if (attrs == NULL || keep == NULL) goto done;
  if (ids == NULL || attributes == NULL || ints == NULL || floats == NULL) {
    PyErr_NoMemory();
    goto done;
  }
  for (Py_ssize_t i = 0; i < n_in; ++i) {
    PyObject *item = PySequence_GetItem(inputs, i);
    ids[i] = item != NULL ? (int32_t)PyLong_AsLong(item) : -1;
    Py_XDECREF(item);
  }
  for (Py_ssize_t i = 0; i < n_attr && !PyErr_Occurred(); ++i) {
    PyObject *pair = PySequence_GetItem(attrs, i);
    if (pair == NULL) break;
    etrt_py_attribute(pair, &attributes[i], keep, ints + 64 * i, floats + 64 * i);
    Py_DECREF(pair);
  }
  if (PyErr_Occurred()) goto done;
  etrt_status status =
      etrt_network_add_op(((etrt_py_network *)self)->network, op_type, name, (uint32_t)n_in, ids,
                          (uint32_t)num_outputs, outputs, (uint32_t)n_attr, attributes);
  if (status != ETRT_OK) {
    etrt_py_raise_status(status);
    goto done;
  }
  result = PyList_New(num_outputs);
  for (int i = 0; result != NULL && i < num_outputs; ++i)
    PyList_SetItem(result, i, PyLong_FromLong(outputs[i]));
done:
  free(ids);
  free(attributes);
  free(ints);
  free(floats);
  Py_XDECREF(keep);
  Py_XDECREF(attrs);
  Py_XDECREF(inputs);
  return result;
}

static PyObject *etrt_py_network_mark_output(PyObject *self, PyObject *args) {
  int value;
  const char *name;
  if (!PyArg_ParseTuple(args, "is", &value, &name)) return NULL;
  etrt_status status = etrt_network_mark_output(((etrt_py_network *)self)->network, value, name);
  if (status != ETRT_OK) return etrt_py_raise_status(status);
  Py_RETURN_NONE;
}

static PyObject *etrt_py_network_value_info(PyObject *self, PyObject *args) {
  int value;
  if (!PyArg_ParseTuple(args, "i", &value)) return NULL;
  etrt_dtype dtype;
  int32_t rank;
  int64_t min_sizes[ETRT_MAX_RANK], max_sizes[ETRT_MAX_RANK];
  etrt_status status = etrt_network_value_info(((etrt_py_network *)self)->network, value, &dtype,
                                               &rank, min_sizes, max_sizes);
  if (status != ETRT_OK) return etrt_py_raise_status(status);
  PyObject *mins = PyTuple_New(rank > 0 ? rank : 0), *maxs = PyTuple_New(rank > 0 ? rank : 0);
  for (int32_t i = 0; mins != NULL && maxs != NULL && i < rank; ++i) {
    PyTuple_SetItem(mins, i, PyLong_FromLongLong(min_sizes[i]));
    PyTuple_SetItem(maxs, i, PyLong_FromLongLong(max_sizes[i]));
  }
  if (mins == NULL || maxs == NULL) {
    Py_XDECREF(mins);
    Py_XDECREF(maxs);
    return NULL;
  }
  return Py_BuildValue("(sNN)", etrt_dtype_name(dtype), mins, maxs);
}

static int etrt_py_device_arg(const char *text, etrt_device *device) {
  if (etrt_device_parse(text, device) != 0) {
    etrt_py_raise(ETRT_ERROR_INVALID_ARGUMENT, "device '%s': expected \"cpu\" or \"cuda:N\"", text);
    return -1;
  }
  return 0;
}

static PyObject *etrt_py_network_supports(PyObject *self, PyObject *args) {
  int value;
  const char *device_text;
  if (!PyArg_ParseTuple(args, "is", &value, &device_text)) return NULL;
  etrt_device device;
  if (etrt_py_device_arg(device_text, &device) != 0) return NULL;
  int supported = 0;
  etrt_status status =
      etrt_support_network_node(((etrt_py_network *)self)->network, value, device, &supported);
  if (status != ETRT_OK) return etrt_py_raise_status(status);
  return PyBool_FromLong(supported);
}

/* build(device, precision, name, compute_major, compute_minor) -> plan bytes */
static PyObject *etrt_py_network_build(PyObject *self, PyObject *args) {
  const char *device_text, *name;
  int precision, major, minor;
  if (!PyArg_ParseTuple(args, "sisii", &device_text, &precision, &name, &major, &minor))
    return NULL;
  etrt_plan_options options = {.precision = (etrt_precision)precision,
                               .name = name,
                               .compute_major = major,
                               .compute_minor = minor};
  if (etrt_py_device_arg(device_text, &options.device) != 0) return NULL;
  uint8_t *plan = NULL;
  size_t size = 0;
  etrt_status status;
  etrt_network *network = ((etrt_py_network *)self)->network;
  Py_BEGIN_ALLOW_THREADS status = etrt_plan_build(network, &options, &plan, &size);
  Py_END_ALLOW_THREADS if (status != ETRT_OK) return etrt_py_raise_status(status);
  PyObject *bytes = PyBytes_FromStringAndSize((const char *)plan, (Py_ssize_t)size);
  free(plan);
  return bytes;
}

static PyMethodDef etrt_py_network_methods[] = {
    {"add_input", etrt_py_network_add_input, METH_VARARGS, "add_input(name, dtype, min, max)"},
    {"add_constant", etrt_py_network_add_constant, METH_VARARGS,
     "add_constant(name, dtype, sizes, bytes)"},
    {"add_op", etrt_py_network_add_op, METH_VARARGS,
     "add_op(op_type, name, inputs, num_outputs, [(attr, value)]) -> [ids]"},
    {"mark_output", etrt_py_network_mark_output, METH_VARARGS, "mark_output(value, name)"},
    {"value_info", etrt_py_network_value_info, METH_VARARGS, "value_info(v) -> (dtype, min, max)"},
    {"supports", etrt_py_network_supports, METH_VARARGS,
     "supports(value, device): whether device runs the op that made value"},
    {"build", etrt_py_network_build, METH_VARARGS,
     "build(device, precision, name, major, minor) -> plan bytes"},
    {NULL, NULL, 0, NULL}};

static PyType_Slot etrt_py_network_slots[] = {{Py_tp_init, (void *)etrt_py_network_init},
                                              {Py_tp_dealloc, (void *)etrt_py_network_dealloc},
                                              {Py_tp_methods, etrt_py_network_methods},
                                              {0, NULL}};
static PyType_Spec etrt_py_network_spec = {"etrt._etrt.Network", sizeof(etrt_py_network), 0,
                                           Py_TPFLAGS_DEFAULT, etrt_py_network_slots};

/* --- module functions ---------------------------------------------------------- */
static PyObject *etrt_py_supported_op_types(PyObject *self, PyObject *args) {
  const char *device_text;
  if (!PyArg_ParseTuple(args, "s", &device_text)) return NULL;
  etrt_device device;
  if (etrt_py_device_arg(device_text, &device) != 0) return NULL;
  PyObject *list = PyList_New(0);
  for (uint32_t i = 0; list != NULL && i < etrt_support_op_count(); ++i) {
    const char *op = etrt_support_op_type(i);
    if (!etrt_support_op(op, device)) continue;
    PyObject *s = PyUnicode_FromString(op);
    if (s == NULL || PyList_Append(list, s) != 0) Py_CLEAR(list);
    Py_XDECREF(s);
  }
  return list;
}

static PyMethodDef etrt_py_functions[] = {
    {"set_log_handler", etrt_py_set_log_handler, METH_VARARGS,
     "set_log_handler(callable(level, message) or None, level or None)"},
    {"supported_op_types", etrt_py_supported_op_types, METH_VARARGS,
     "supported_op_types(device) -> the ONNX op types the engine runs there"},
    {NULL, NULL, 0, NULL}};

static int etrt_py_add_type(PyObject *module, PyType_Spec *spec, PyObject **out, const char *name) {
  *out = PyType_FromSpec(spec);
  if (*out == NULL) return -1;
  return PyModule_AddObjectRef(module, name, *out);
}

static int etrt_py_add_error(PyObject *module, etrt_status status, const char *name,
                             const char *doc) {
  char full[64];
  snprintf(full, sizeof full, "etrt.%s", name);
  PyObject *type = PyErr_NewExceptionWithDoc(full, doc, etrt_py_error, NULL);
  if (type == NULL) return -1;
  etrt_py_errors[status] = type;
  return PyModule_AddObjectRef(module, name, type);
}

static struct PyModuleDef etrt_py_module = {PyModuleDef_HEAD_INIT,
                                            "_etrt",
                                            "etrt's C binding (use the etrt package).",
                                            -1,
                                            etrt_py_functions,
                                            NULL,
                                            NULL,
                                            NULL,
                                            NULL};

PyMODINIT_FUNC PyInit__etrt(void);
PyMODINIT_FUNC PyInit__etrt(void) {
  PyObject *m = PyModule_Create(&etrt_py_module);
  if (m == NULL) return NULL;
  etrt_py_error = PyErr_NewExceptionWithDoc(
      "etrt.Error", "An etrt call failed; the message is etrt's.", PyExc_RuntimeError, NULL);
  if (etrt_py_error == NULL || PyModule_AddObjectRef(m, "Error", etrt_py_error) != 0 ||
      etrt_py_add_error(m, ETRT_ERROR_INVALID_ARGUMENT, "InvalidArgumentError",
                        "The caller passed something etrt cannot take.") != 0 ||
      etrt_py_add_error(m, ETRT_ERROR_INVALID_FORMAT, "FormatError",
                        "A file's bytes are malformed.") != 0 ||
      etrt_py_add_error(m, ETRT_ERROR_NOT_FOUND, "NotFoundError",
                        "A named thing (file, method) does not exist.") != 0 ||
      etrt_py_add_error(m, ETRT_ERROR_UNSUPPORTED, "UnsupportedError",
                        "Valid, but not something etrt can do.") != 0 ||
      etrt_py_add_error(m, ETRT_ERROR_DEVICE, "DeviceError", "The GPU or its driver failed.") !=
          0 ||
      etrt_py_add_type(m, &etrt_py_run_spec, &etrt_py_run_type, "_Run") != 0 ||
      etrt_py_add_type(m, &etrt_py_tensor_spec, &etrt_py_tensor_type, "Tensor") != 0 ||
      etrt_py_add_type(m, &etrt_py_program_spec, &etrt_py_program_type, "Program") != 0 ||
      etrt_py_add_type(m, &etrt_py_network_spec, &etrt_py_network_type, "Network") != 0) {
    Py_DECREF(m);
    return NULL;
  }
  return m;
}
