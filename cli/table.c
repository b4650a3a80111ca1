#include "cli/table.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define MAX_COLUMNS 32

struct tj_table {
	size_t n_columns;
	char **cells; /* owned array of owned strings */
	size_t n, cap;
	bool right[MAX_COLUMNS];
	size_t fixed[MAX_COLUMNS]; /* 0: as wide as the widest cell */
};

struct tj_table *tj_table_new(size_t n_columns)
{
	struct tj_table *t;

	if (n_columns == 0 || n_columns > MAX_COLUMNS)
		return NULL;
	t = calloc(1, sizeof(*t));
	if (t)
		t->n_columns = n_columns;
	return t;
}

int tj_table_add(struct tj_table *t, const char *cell)
{
	char *copy;

	if (t->n >= TJ_TABLE_MAX_CELLS)
		return -E2BIG;
	if (t->n == t->cap) {
		size_t cap = t->cap ? t->cap * 2 : 64;
		char **cells = realloc(t->cells, cap * sizeof(*cells));

		if (!cells)
			return -ENOMEM;
		t->cells = cells;
		t->cap = cap;
	}
	copy = strdup(cell ? cell : "");
	if (!copy)
		return -ENOMEM;
	t->cells[t->n++] = copy;
	return 0;
}

void tj_table_align_right(struct tj_table *t, size_t col)
{
	if (col < t->n_columns)
		t->right[col] = true;
}

void tj_table_set_width(struct tj_table *t, size_t col, size_t width)
{
	if (col < t->n_columns)
		t->fixed[col] = width;
}

static void print_cell(FILE *out, const char *cell, size_t width, bool right, bool last)
{
	size_t len = strlen(cell);

	if (len > width) {
		/* Cut as sacct cuts: the last character that fits becomes '+'. */
		fprintf(out, "%.*s+", (int)(width ? width - 1 : 0), cell);
		return;
	}
	if (right)
		fprintf(out, "%*s", (int)width, cell);
	else if (last)
		fputs(cell, out);
	else
		fprintf(out, "%-*s", (int)width, cell);
}

void tj_table_print(const struct tj_table *t, FILE *out, bool parsable)
{
	size_t width[MAX_COLUMNS] = { 0 };

	for (size_t i = 0; i < t->n; i++) {
		size_t c = i % t->n_columns, len = strlen(t->cells[i]);

		if (len > width[c])
			width[c] = len;
	}
	for (size_t c = 0; c < t->n_columns; c++)
		if (t->fixed[c])
			width[c] = t->fixed[c];
	for (size_t i = 0; i < t->n; i++) {
		size_t c = i % t->n_columns;
		bool last = c + 1 == t->n_columns || i + 1 == t->n;

		if (parsable)
			fputs(t->cells[i], out);
		else
			print_cell(out, t->cells[i], width[c], t->right[c], last);
		if (!last)
			fputc(parsable ? '|' : ' ', out);
		else
			fputc('\n', out);
	}
}

struct tj_table *tj_table_free(struct tj_table *t)
{
	if (!t)
		return NULL;
	for (size_t i = 0; i < t->n; i++)
		free(t->cells[i]);
	free(t->cells);
	free(t);
	return NULL;
}
