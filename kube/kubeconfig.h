/* Kubeconfig YAML: parsing, merging several files, and resolving the chosen context into a
 * tj_kube_config. No I/O. */
#pragma once

#include <stddef.h>

#include "kube/config.h"

/* One kubeconfig document in memory. */
struct tj_kube_doc {
	const char *origin; /* path of the file: names it in messages, and relative paths inside
	                       are resolved against its folder */
	const char *yaml;
	size_t len;
};

/* Parses and merges kubeconfig documents as client-go does (for each cluster, user and context
 * name, and for current-context, the first document that sets it wins), then picks the
 * context (context_override if not NULL, else current-context) and resolves it into *ret.
 * No I/O: referenced files stay paths. On error returns -EINVAL and writes a message naming
 * the file and the field, e.g. "/home/u/.kube/config: users[0].user.client-key-data: invalid
 * base64", or "kubeconfig: context \"x\" not found"; *ret is written only on success. */
int tj_kube_config_parse(const struct tj_kube_doc *docs, size_t n_docs,
                         const char *context_override, struct tj_kube_config **ret, char *err,
                         size_t errlen);
