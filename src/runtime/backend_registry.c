/* The backend registry, keyed by delegate id. */
#include <pthread.h>
#include <string.h>

#include "base/status.h"
#include "runtime/backend.h"
/* The one place the runtime names a backend implementation: the built-in engine
 * delegate, registered below. Nothing else in src/runtime includes src/delegate. */
#include "delegate/etrt_backend.h"

#define ETRT_BACKEND_CAPACITY 16

static pthread_mutex_t etrt_backend_mutex = PTHREAD_MUTEX_INITIALIZER;
static const etrt_backend *etrt_backends[ETRT_BACKEND_CAPACITY];
static size_t etrt_backend_count;
static int etrt_backend_builtins_registered;

static const etrt_backend *etrt_backend_find_locked(const char *id) {
  for (size_t i = 0; i < etrt_backend_count; ++i) {
    if (strcmp(etrt_backends[i]->id, id) == 0) return etrt_backends[i];
  }
  return NULL;
}

static etrt_status etrt_backend_register_locked(const etrt_backend *backend) {
  if (backend == NULL || backend->id == NULL || backend->init == NULL || backend->execute == NULL ||
      backend->destroy == NULL) {
    return etrt_error(ETRT_ERROR_INVALID_ARGUMENT,
                      "backend registration needs an id, init, execute and destroy");
  }
  if (etrt_backend_find_locked(backend->id) != NULL) {
    return etrt_error(ETRT_ERROR_ALREADY_EXISTS, "a backend is already registered under id '%s'",
                      backend->id);
  }
  if (etrt_backend_count == ETRT_BACKEND_CAPACITY) {
    return etrt_error(ETRT_ERROR_OUT_OF_MEMORY,
                      "cannot register backend '%s': the registry holds %d", backend->id,
                      ETRT_BACKEND_CAPACITY);
  }
  etrt_backends[etrt_backend_count++] = backend;
  return ETRT_OK;
}

/* The built-in engine delegate is registered on first use of the registry, so that a
 * program that names it always finds it and a user's attempt to register the same id
 * is refused like any duplicate. */
static void etrt_backend_register_builtins_locked(void) {
  if (etrt_backend_builtins_registered) return;
  etrt_backend_builtins_registered = 1;
  (void)etrt_backend_register_locked(&etrt_backend_etrt);
}

etrt_status etrt_backend_register(const etrt_backend *backend) {
  pthread_mutex_lock(&etrt_backend_mutex);
  etrt_backend_register_builtins_locked();
  etrt_status status = etrt_backend_register_locked(backend);
  pthread_mutex_unlock(&etrt_backend_mutex);
  return status;
}

const etrt_backend *etrt_backend_find(const char *id) {
  pthread_mutex_lock(&etrt_backend_mutex);
  etrt_backend_register_builtins_locked();
  const etrt_backend *backend = etrt_backend_find_locked(id);
  pthread_mutex_unlock(&etrt_backend_mutex);
  return backend;
}
