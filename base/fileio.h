/* Reading a whole file into memory, bounded: the one reader of every file the process takes
 * as input (kubeconfig and the files it names, the service account's token, the config file
 * and its reloads, the manifests render reads, procfs). */
#pragma once

#include <stddef.h>

/* Also accept FIFOs and character devices, read until end of file (a manifest given as
 * /dev/stdin or <(...)). Only for commands that run outside the event loop: such a read
 * waits for its writer. */
#define TJ_READ_FILE_STREAMS 1u

/* Reads the file at path, of at most max bytes, into a new NUL-terminated buffer. The file is
 * opened non-blocking, so that a FIFO at that path never waits for a writer, and must be a
 * regular file unless flags has TJ_READ_FILE_STREAMS. Returns 0, -EISDIR for a directory,
 * -EINVAL for anything else that is not a regular file, -E2BIG for a file of more than max
 * bytes (told by its size before any read, or by what it holds when its size says nothing,
 * as procfs's), -ENOMEM, or the -errno of open or read. *ret and *ret_len are written only on
 * success. */
int tj_read_file(const char *path, size_t max, unsigned flags, char **ret, size_t *ret_len);
