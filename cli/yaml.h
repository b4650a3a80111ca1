/* YAML at the edges of the CLI: a YAML stream read into JSON trees (libfyaml parses it and
 * emits each document as JSON, which cJSON parses), and JSON trees printed as block YAML the
 * way kubectl prints objects. */
#pragma once

#include <stddef.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#define TJ_YAML_MAX_FILE (4 * 1024 * 1024)
#define TJ_YAML_MAX_DOCS 256

/* Reads every document of a YAML file (empty documents are skipped). On success *ret is an
 * owned array of *ret_n owned trees. -errno if the file cannot be read, -E2BIG beyond the
 * limits above, -EINVAL if it is not YAML (with "path: what" in err). */
int tj_yaml_read_file(const char *path, cJSON ***ret, size_t *ret_n, char *err, size_t errlen);

/* Parses a YAML stream held in memory, as tj_yaml_read_file. origin names it in err. */
int tj_yaml_parse(const char *text, size_t len, const char *origin, cJSON ***ret, size_t *ret_n,
                  char *err, size_t errlen);

/* Frees an array from tj_yaml_read_file. Accepts NULL; returns NULL. */
cJSON **tj_yaml_docs_free(cJSON **docs, size_t n);

/* Prints item as one YAML document ("---" first), block style, two-space indentation;
 * strings that YAML would read as something else are double-quoted. */
void tj_yaml_print(FILE *out, const cJSON *item);
