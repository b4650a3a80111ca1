#include "cli/yaml.h"

#include <errno.h>
#include <libfyaml.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/fileio.h"
#include "base/yaml_guard.h"

cJSON **tj_yaml_docs_free(cJSON **docs, size_t n)
{
	for (size_t i = 0; docs && i < n; i++)
		cJSON_Delete(docs[i]);
	free(docs);
	return NULL;
}

/* A plain scalar that JSON reads as a value of its own: null, true, false, or a number in
 * JSON's grammar (-?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?). */
static bool json_number(const char *s)
{
	if (*s == '-')
		s++;
	if (*s == '0')
		s++;
	else if (*s >= '1' && *s <= '9')
		while (*s >= '0' && *s <= '9')
			s++;
	else
		return false;
	if (*s == '.') {
		if (!(*++s >= '0' && *s <= '9'))
			return false;
		while (*s >= '0' && *s <= '9')
			s++;
	}
	if (*s == 'e' || *s == 'E') {
		s++;
		if (*s == '+' || *s == '-')
			s++;
		if (!(*s >= '0' && *s <= '9'))
			return false;
		while (*s >= '0' && *s <= '9')
			s++;
	}
	return *s == '\0';
}

/* A scalar as libfyaml's JSON emitter (non type preserving) writes it: a plain one, untagged
 * or tagged other than !!str and "!", is null when empty, else null, true, false or a number
 * when it is written as JSON writes those; anything else is a string. */
static cJSON *scalar_to_json(struct fy_node *node, const char *text)
{
	size_t tag_len = 0;
	const char *tag = fy_node_get_tag(node, &tag_len);
	static const char str_tag[] = "tag:yaml.org,2002:str";
	bool as_string =
	        (tag && ((tag_len == 1 && tag[0] == '!') ||
	                 (tag_len == sizeof(str_tag) - 1 && memcmp(tag, str_tag, tag_len) == 0)));

	if (as_string || fy_node_get_style(node) != FYNS_PLAIN)
		return cJSON_CreateString(text);
	if (!*text || strcmp(text, "null") == 0)
		return cJSON_CreateNull();
	if (strcmp(text, "true") == 0 || strcmp(text, "false") == 0)
		return cJSON_CreateBool(text[0] == 't');
	if (json_number(text))
		return cJSON_CreateNumber(strtod(text, NULL));
	return cJSON_CreateString(text);
}

/* A document's node as a JSON tree, as the JSON emitter of libfyaml would write it and cJSON
 * read it back, without the emitter: in libfyaml 0.7.12 it leaks the chunks of a scalar with
 * many escapes ('a''b''c''d''e'). 0, -EINVAL for what JSON cannot hold (an alias, a key
 * that is not a scalar), or -ENOMEM. The recursion is bounded by libfyaml's depth limit. */
static int node_to_json(struct fy_node *node, cJSON **ret)
{
	cJSON *out = NULL, *child = NULL;
	void *iter = NULL;
	int r = -ENOMEM;

	if (!node) {
		out = cJSON_CreateNull();
	} else if (fy_node_get_type(node) == FYNT_SCALAR) {
		/* libfyaml has no text for an alias, nor for a scalar it fails to format. */
		const char *text =
		        fy_node_get_style(node) == FYNS_ALIAS ? NULL : fy_node_get_scalar0(node);

		if (!text)
			return -EINVAL;
		out = scalar_to_json(node, text);
	} else if (fy_node_get_type(node) == FYNT_SEQUENCE) {
		struct fy_node *item;

		out = cJSON_CreateArray();
		while (out && (item = fy_node_sequence_iterate(node, &iter))) {
			r = node_to_json(item, &child);
			if (r < 0)
				goto fail;
			cJSON_AddItemToArray(out, child);
		}
	} else {
		struct fy_node_pair *pair;

		out = cJSON_CreateObject();
		while (out && (pair = fy_node_mapping_iterate(node, &iter))) {
			struct fy_node *key = fy_node_pair_key(pair);
			const char *name = "";

			r = -EINVAL;
			if (key && (fy_node_get_type(key) != FYNT_SCALAR ||
			            fy_node_get_style(key) == FYNS_ALIAS))
				goto fail;
			r = -ENOMEM;
			if (key && !(name = fy_node_get_scalar0(key)))
				goto fail;
			r = node_to_json(fy_node_pair_value(pair), &child);
			if (r < 0)
				goto fail;
			if (!cJSON_AddItemToObject(out, name, child)) {
				cJSON_Delete(child);
				r = -ENOMEM;
				goto fail;
			}
		}
	}
	if (!out)
		return -ENOMEM;
	*ret = out;
	return 0;
fail:
	cJSON_Delete(out);
	return r;
}

int tj_yaml_parse(const char *text, size_t len, const char *origin, cJSON ***ret, size_t *ret_n,
                  char *err, size_t errlen)
{
	struct fy_diag_cfg diag_cfg;
	struct fy_diag *diag;
	struct fy_parse_cfg cfg = { .flags = FYPCF_QUIET };
	struct fy_parser *parser;
	struct fy_document *doc;
	cJSON **docs = NULL;
	size_t n = 0;
	int r = -ENOMEM;
	const char *why;
	size_t bad = tj_yaml_refused_at(text, len, &why);

	/* What would hang or crash libfyaml is refused before it reads the text. */
	if (bad < len) {
		snprintf(err, errlen, "%s: %s (byte %zu)", origin, why, bad);
		return -EINVAL;
	}
	/* Errors are collected, not printed, so that the caller reports them with the line. */
	fy_diag_cfg_default(&diag_cfg);
	diag_cfg.fp = NULL;
	diag = fy_diag_create(&diag_cfg);
	if (!diag)
		return -ENOMEM;
	fy_diag_set_collect_errors(diag, true);
	cfg.diag = diag;
	parser = fy_parser_create(&cfg);
	if (!parser) {
		fy_diag_destroy(diag);
		return -ENOMEM;
	}
	docs = calloc(TJ_YAML_MAX_DOCS, sizeof(*docs));
	if (!docs || fy_parser_set_string(parser, text, len) < 0)
		goto out;
	while ((doc = fy_parse_load_document(parser))) {
		cJSON *tree;

		if (!fy_document_root(doc)) {
			fy_parse_document_destroy(parser, doc);
			continue;
		}
		r = node_to_json(fy_document_root(doc), &tree);
		fy_parse_document_destroy(parser, doc);
		if (r == -EINVAL)
			snprintf(err, errlen, "%s: document %zu cannot be read as JSON", origin,
			         n + 1);
		if (r < 0)
			goto out;
		r = -ENOMEM;
		if (cJSON_IsNull(tree)) { /* an empty document */
			cJSON_Delete(tree);
			continue;
		}
		if (n == TJ_YAML_MAX_DOCS) {
			cJSON_Delete(tree);
			r = -E2BIG;
			snprintf(err, errlen, "%s: more than %d documents", origin,
			         TJ_YAML_MAX_DOCS);
			goto out;
		}
		docs[n++] = tree;
	}
	if (fy_parser_get_stream_error(parser)) {
		struct fy_diag_error *e = tj_yaml_first_error(diag);

		r = -EINVAL;
		if (e)
			snprintf(err, errlen, "%s:%d:%d: %s", origin, e->line, e->column, e->msg);
		else
			snprintf(err, errlen, "%s: not valid YAML", origin);
		goto out;
	}
	*ret = docs;
	*ret_n = n;
	docs = NULL;
	r = 0;
out:
	tj_yaml_docs_free(docs, n);
	fy_parser_destroy(parser);
	fy_diag_destroy(diag);
	return r;
}

int tj_yaml_read_file(const char *path, cJSON ***ret, size_t *ret_n, char *err, size_t errlen)
{
	char *text;
	size_t len;
	/* A command's input may be a pipe (render -f /dev/stdin). */
	int r = tj_read_file(path, TJ_YAML_MAX_FILE, TJ_READ_FILE_STREAMS, &text, &len);

	if (r == -E2BIG) {
		snprintf(err, errlen, "%s: larger than %d bytes", path, TJ_YAML_MAX_FILE);
		return r;
	}
	if (r < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(-r));
		return r;
	}
	r = tj_yaml_parse(text, len, path, ret, ret_n, err, errlen);
	free(text);
	return r;
}

static bool is_letter(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

/* A string YAML reads back as the same string when written plain: made of the characters of
 * names, paths, images and quantities; starting with a letter, a slash, or dashes before a
 * letter ("-c", "--config"); starting with a digit only with a letter no number has ("400Gi", not
 * "1e3" or "0x1F"); and not one of the words YAML 1.1 reads as booleans or null (kubectl's YAML is
 * 1.1). */
static bool plain_ok(const char *s)
{
	static const char *const words[] = { "y",   "n",    "yes",   "no",  "on",
		                             "off", "true", "false", "null" };

	if (!*s)
		return false;
	for (const char *p = s; *p; p++)
		if (!(is_letter(*p) || (*p >= '0' && *p <= '9') || strchr("-_./:", *p)) ||
		    (*p == ':' && (p[1] == '\0' || p == s)))
			return false;
	if (*s >= '0' && *s <= '9') {
		if (strpbrk(s, ":_") || !strpbrk(s, "ghijklmnpqrstuvwyzGHIJKLMNPQRSTUVWYZ"))
			return false;
	} else if (!(is_letter(*s) || *s == '/' || (*s == '-' && is_letter(s[1])) ||
	             (strncmp(s, "--", 2) == 0 && is_letter(s[2])))) {
		return false;
	}
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (strcasecmp(s, words[i]) == 0)
			return false;
	return true;
}

static void print_quoted(FILE *out, const char *s)
{
	cJSON *item = cJSON_CreateString(s);
	char *quoted = item ? cJSON_PrintUnformatted(item) : NULL;

	/* JSON's escapes are YAML's double-quoted escapes. */
	fputs(quoted ? quoted : "\"\"", out);
	cJSON_free(quoted);
	cJSON_Delete(item);
}

static void print_string(FILE *out, const char *s)
{
	if (plain_ok(s))
		fputs(s, out);
	else
		print_quoted(out, s);
}

/* A multi-line string (a script in a command) as a literal block, when YAML can hold it
 * exactly: printable lines (tabs are content after the indentation), the first not starting
 * with a space. */
static bool literal_ok(const char *s)
{
	if (!strchr(s, '\n') || *s == ' ' || *s == '\n')
		return false;
	for (const char *p = s; *p; p++)
		if ((unsigned char)*p < 0x20 && *p != '\n' && *p != '\t')
			return false;
	for (const char *p = s; (p = strchr(p, '\n')); p++)
		if (p > s && p[-1] == ' ')
			return false;
	return s[strlen(s) - 1] != ' ';
}

static void print_literal(FILE *out, const char *s, int indent)
{
	size_t len = strlen(s);
	const char *p = s;

	/* |- strips the final newline, | keeps one, |+ keeps them all. */
	if (s[len - 1] != '\n')
		fputs("|-\n", out);
	else if (len > 1 && s[len - 2] == '\n')
		fputs("|+\n", out);
	else
		fputs("|\n", out);
	while (*p) {
		const char *nl = strchr(p, '\n');
		size_t n = nl ? (size_t)(nl - p) : strlen(p);

		if (n > 0)
			fprintf(out, "%*s%.*s", indent, "", (int)n, p);
		fputc('\n', out);
		p += n + (nl ? 1 : 0);
	}
}

static void print_scalar(FILE *out, const cJSON *item, int indent)
{
	if (cJSON_IsString(item) && literal_ok(item->valuestring)) {
		print_literal(out, item->valuestring, indent);
		return;
	}
	if (cJSON_IsString(item)) {
		print_string(out, item->valuestring);
	} else if (cJSON_IsNumber(item)) {
		double v = item->valuedouble;

		if (v == (double)(long long)v)
			fprintf(out, "%lld", (long long)v);
		else
			fprintf(out, "%.17g", v);
	} else if (cJSON_IsBool(item)) {
		fputs(cJSON_IsTrue(item) ? "true" : "false", out);
	} else if (cJSON_IsArray(item)) {
		fputs("[]", out);
	} else if (cJSON_IsObject(item)) {
		fputs("{}", out);
	} else {
		fputs("null", out);
	}
}

static bool is_block(const cJSON *item)
{
	return (cJSON_IsObject(item) || cJSON_IsArray(item)) && item->child;
}

static void pad(FILE *out, int n)
{
	fprintf(out, "%*s", n, "");
}

/* Prints a non-empty object or array at column indent; the first line's indentation is
 * already written when inline_first (an object that is an element of a list). */
static void print_block(FILE *out, const cJSON *item, int indent, bool inline_first)
{
	const cJSON *el;
	bool first = true;

	cJSON_ArrayForEach(el, item)
	{
		if (!(first && inline_first))
			pad(out, indent);
		first = false;
		if (cJSON_IsObject(item)) {
			print_string(out, el->string);
			fputc(':', out);
			if (is_block(el)) {
				fputc('\n', out);
				/* Lists sit at their key's indentation, as kubectl prints them. */
				print_block(out, el, cJSON_IsArray(el) ? indent : indent + 2,
				            false);
				continue;
			}
			fputc(' ', out);
		} else {
			if (cJSON_IsArray(el) && el->child) {
				fputs("-\n", out);
				print_block(out, el, indent + 2, false);
				continue;
			}
			fputs("- ", out);
			if (cJSON_IsObject(el) && el->child) {
				print_block(out, el, indent + 2, true);
				continue;
			}
		}
		print_scalar(out, el, indent + 2);
		if (!(cJSON_IsString(el) && literal_ok(el->valuestring)))
			fputc('\n', out);
	}
}

void tj_yaml_print(FILE *out, const cJSON *item)
{
	fputs("---\n", out);
	if (is_block(item)) {
		print_block(out, item, 0, false);
	} else {
		print_scalar(out, item, 2);
		if (!(cJSON_IsString(item) && literal_ok(item->valuestring)))
			fputc('\n', out);
	}
}
