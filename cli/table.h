/* A text table as squeue and sacct print them: a header row and rows of cells, columns as
 * wide as their widest cell (or a fixed width, cut with '+' as sacct cuts), separated by a
 * space; or, parsable, cells joined by '|' (sacct -P). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* At most this many cells in one table (rows times columns): a bound on what a listing of
 * TJ_SLURM_MAX_OBJECTS jobs needs. */
#define TJ_TABLE_MAX_CELLS (2 * 1000 * 1000)

struct tj_table;

/* A table of n_columns (at most 32). NULL on -ENOMEM. */
struct tj_table *tj_table_new(size_t n_columns);

/* Appends a cell (copied), filling rows left to right; the first row is the header.
 * -ENOMEM, or -E2BIG beyond TJ_TABLE_MAX_CELLS. */
int tj_table_add(struct tj_table *t, const char *cell);

/* Column col is right-aligned (numbers, times, as squeue aligns them). */
void tj_table_align_right(struct tj_table *t, size_t col);

/* Column col is exactly width characters wide; longer cells are cut and end in '+'. */
void tj_table_set_width(struct tj_table *t, size_t col, size_t width);

/* Prints the table (a last row left incomplete is printed as it is). parsable: cells joined
 * by '|', nothing aligned. */
void tj_table_print(const struct tj_table *t, FILE *out, bool parsable);

/* Accepts NULL; returns NULL. */
struct tj_table *tj_table_free(struct tj_table *t);
