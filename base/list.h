/* An intrusive doubly linked list: the element embeds a struct tj_link, so a list owns no
 * memory, and an element takes itself out in constant time wherever it stands. Elements are
 * reached from their links with TJ_CONTAINER_OF. */
#pragma once

#include <stddef.h>

struct tj_link {
	struct tj_link *prev, *next; /* NULL at the ends, and while in no list */
};

struct tj_list {
	struct tj_link *head, *tail; /* borrowed */
	size_t n;
};

/* The struct of type `type` whose member `member` is at ptr. */
#define TJ_CONTAINER_OF(ptr, type, member) ((type *)(void *)((char *)(ptr)-offsetof(type, member)))

/* The element of type `type` whose link `member` is at link, or NULL for a NULL link. */
#define TJ_LIST_ENTRY(link, type, member)                                                          \
	((link) ? TJ_CONTAINER_OF((link), type, member) : (type *)NULL)

/* Puts e, in no list, at the end of l. */
static inline void tj_list_append(struct tj_list *l, struct tj_link *e)
{
	e->next = NULL;
	e->prev = l->tail;
	if (l->tail)
		l->tail->next = e;
	else
		l->head = e;
	l->tail = e;
	l->n++;
}

/* Puts e, in no list, at the front of l. */
static inline void tj_list_prepend(struct tj_list *l, struct tj_link *e)
{
	e->prev = NULL;
	e->next = l->head;
	if (l->head)
		l->head->prev = e;
	else
		l->tail = e;
	l->head = e;
	l->n++;
}

/* Takes e out of l, which holds it. */
static inline void tj_list_unlink(struct tj_list *l, struct tj_link *e)
{
	if (e->prev)
		e->prev->next = e->next;
	else
		l->head = e->next;
	if (e->next)
		e->next->prev = e->prev;
	else
		l->tail = e->prev;
	e->prev = e->next = NULL;
	l->n--;
}
