#include "base/file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/status.h"

static const uint8_t etrt_empty_file[1] = {0};

etrt_status etrt_file_map_open(const char *path, etrt_file_map *out) {
  memset(out, 0, sizeof *out);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return etrt_error(ETRT_ERROR_IO, "cannot open '%s': %s", path, strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0) {
    int e = errno;
    close(fd);
    return etrt_error(ETRT_ERROR_IO, "cannot stat '%s': %s", path, strerror(e));
  }
  if (!S_ISREG(st.st_mode)) {
    close(fd);
    return etrt_error(ETRT_ERROR_IO, "'%s' is not a regular file", path);
  }
  if (st.st_size == 0) {
    close(fd);
    out->data = etrt_empty_file;
    return ETRT_OK;
  }
  void *mapping = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
  int e = errno;
  close(fd);
  if (mapping == MAP_FAILED) {
    return etrt_error(ETRT_ERROR_IO, "cannot map '%s': %s", path, strerror(e));
  }
  out->data = mapping;
  out->size = (size_t)st.st_size;
  out->mapping_ = mapping;
  out->mapping_size_ = (size_t)st.st_size;
  return ETRT_OK;
}

void etrt_file_map_close(etrt_file_map *map) {
  if (map->mapping_ != NULL) munmap(map->mapping_, map->mapping_size_);
  memset(map, 0, sizeof *map);
}

etrt_status etrt_file_write_atomic(const char *path, const void *data, size_t size) {
  size_t n = strlen(path);
  char *temp = malloc(n + 16);
  if (temp == NULL) return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "out of memory writing '%s'", path);
  snprintf(temp, n + 16, "%s.tmpXXXXXX", path);
  int fd = mkstemp(temp);
  if (fd < 0) {
    etrt_status s = etrt_error(ETRT_ERROR_IO, "cannot create '%s': %s", temp, strerror(errno));
    free(temp);
    return s;
  }
  const uint8_t *p = data;
  size_t left = size;
  while (left > 0) {
    ssize_t w = write(fd, p, left);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      etrt_status s = etrt_error(ETRT_ERROR_IO, "cannot write '%s': %s", path, strerror(errno));
      close(fd);
      unlink(temp);
      free(temp);
      return s;
    }
    p += w;
    left -= (size_t)w;
  }
  fchmod(fd, 0644);
  /* On disk before the rename names it: a crash leaves the old file or the whole new one.
   * It also leaves the page cache clean, so that a run right after a build can hand back
   * the pages of the weights it reorders (clean pages are dropped, dirty ones stay). */
  if (fsync(fd) != 0 || close(fd) != 0 || rename(temp, path) != 0) {
    etrt_status s = etrt_error(ETRT_ERROR_IO, "cannot write '%s': %s", path, strerror(errno));
    unlink(temp);
    free(temp);
    return s;
  }
  free(temp);
  return ETRT_OK;
}

etrt_status etrt_file_read_all(const char *path, uint8_t **data, size_t *size) {
  *data = NULL;
  *size = 0;
  etrt_file_map map;
  ETRT_RETURN_IF_ERROR(etrt_file_map_open(path, &map));
  uint8_t *copy = malloc(map.size ? map.size : 1);
  if (copy == NULL) {
    etrt_file_map_close(&map);
    return etrt_error(ETRT_ERROR_OUT_OF_MEMORY, "out of memory reading '%s'", path);
  }
  memcpy(copy, map.data, map.size);
  *data = copy;
  *size = map.size;
  etrt_file_map_close(&map);
  return ETRT_OK;
}

void etrt_file_pages_release(const void *data, size_t size) {
#ifdef MADV_PAGEOUT
  uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
  uintptr_t begin = ((uintptr_t)data + page - 1) / page * page;
  uintptr_t end = ((uintptr_t)data + size) / page * page;
  if (end > begin) (void)madvise((void *)begin, end - begin, MADV_PAGEOUT);
#else
  (void)data, (void)size;
#endif
}
