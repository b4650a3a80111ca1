#include "controller/executor/status_pass.h"

#include <string.h>

static void list_append(struct tj_status_pass_list *l, struct tj_status_pass_waiter *w)
{
	w->next = NULL;
	w->prev = l->tail;
	if (l->tail)
		l->tail->next = w;
	else
		l->head = w;
	l->tail = w;
	l->n++;
}

static void list_unlink(struct tj_status_pass_list *l, struct tj_status_pass_waiter *w)
{
	if (w->prev)
		w->prev->next = w->next;
	else
		l->head = w->next;
	if (w->next)
		w->next->prev = w->prev;
	else
		l->tail = w->prev;
	w->prev = w->next = NULL;
	l->n--;
}

static struct tj_status_pass_slot *slot_of(struct tj_status_pass *p, const char *key)
{
	for (size_t i = 0; i < p->n_in_flight; i++)
		if (strcmp(p->slots[i].key, key) == 0)
			return &p->slots[i];
	return NULL;
}

static void go_stale(struct tj_status_pass *p, struct tj_status_pass_waiter *w)
{
	w->state = TJ_STATUS_PASS_STALE;
	list_append(&p->stale, w);
}

/* Blocks w behind its job's write in flight; the one blocked there before goes stale. */
static void block(struct tj_status_pass *p, struct tj_status_pass_slot *s,
                  struct tj_status_pass_waiter *w)
{
	if (s->blocked) {
		p->n_blocked--;
		go_stale(p, s->blocked);
	}
	s->blocked = w;
	w->state = TJ_STATUS_PASS_BLOCKED;
	p->n_blocked++;
}

void tj_status_pass_add(struct tj_status_pass *p, struct tj_status_pass_waiter *w)
{
	struct tj_status_pass_slot *s = slot_of(p, w->key);

	w->prev = w->next = NULL;
	if (s) {
		block(p, s, w);
		return;
	}
	w->state = TJ_STATUS_PASS_QUEUED;
	list_append(&p->queued, w);
}

void tj_status_pass_remove(struct tj_status_pass *p, struct tj_status_pass_waiter *w)
{
	switch (w->state) {
	case TJ_STATUS_PASS_IDLE:
		return;
	case TJ_STATUS_PASS_QUEUED:
		list_unlink(&p->queued, w);
		break;
	case TJ_STATUS_PASS_STALE:
		list_unlink(&p->stale, w);
		break;
	case TJ_STATUS_PASS_BLOCKED:
		for (size_t i = 0; i < p->n_in_flight; i++)
			if (p->slots[i].blocked == w) {
				p->slots[i].blocked = NULL;
				p->n_blocked--;
			}
		break;
	}
	w->state = TJ_STATUS_PASS_IDLE;
}

struct tj_status_pass_waiter *tj_status_pass_next(struct tj_status_pass *p, size_t budget)
{
	if (budget > TJ_STATUS_PASS_MAX_IN_FLIGHT)
		budget = TJ_STATUS_PASS_MAX_IN_FLIGHT;
	while (p->queued.head && p->n_in_flight < budget) {
		struct tj_status_pass_waiter *w = p->queued.head;
		struct tj_status_pass_slot *s = slot_of(p, w->key);

		list_unlink(&p->queued, w);
		/* Two waiters of one job queued (the first was not superseded): the second waits
		 * for the first's write. */
		if (s) {
			block(p, s, w);
			continue;
		}
		p->slots[p->n_in_flight++] = (struct tj_status_pass_slot){ .key = w->key };
		w->state = TJ_STATUS_PASS_IDLE;
		return w;
	}
	return NULL;
}

void tj_status_pass_done(struct tj_status_pass *p, const char *key)
{
	struct tj_status_pass_slot *s = slot_of(p, key);

	if (!s)
		return;
	if (s->blocked) {
		p->n_blocked--;
		go_stale(p, s->blocked);
	}
	*s = p->slots[--p->n_in_flight];
}

struct tj_status_pass_waiter *tj_status_pass_take_stale(struct tj_status_pass *p)
{
	struct tj_status_pass_waiter *w = p->stale.head;

	if (w) {
		list_unlink(&p->stale, w);
		w->state = TJ_STATUS_PASS_IDLE;
	}
	return w;
}

bool tj_status_pass_pending(const struct tj_status_pass *p)
{
	return p->queued.head || p->stale.head;
}
