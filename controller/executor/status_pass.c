#include "controller/executor/status_pass.h"

#include <string.h>

/* The first waiter of l, or NULL. */
static struct tj_status_pass_waiter *first_of(const struct tj_list *l)
{
	return TJ_LIST_ENTRY(l->head, struct tj_status_pass_waiter, link);
}

/* Jobs with a status write in flight, of the pass or not: the slots in use. */
static size_t n_slots(const struct tj_status_pass *p)
{
	return p->n_in_flight + p->n_others;
}

static struct tj_status_pass_slot *slot_of(const struct tj_status_pass *p, const char *key)
{
	for (size_t i = 0; i < n_slots(p); i++)
		if (strcmp(p->slots[i].key, key) == 0)
			return (struct tj_status_pass_slot *)&p->slots[i];
	return NULL;
}

static void go_stale(struct tj_status_pass *p, struct tj_status_pass_waiter *w)
{
	w->state = TJ_STATUS_PASS_STALE;
	tj_list_append(&p->stale, &w->link);
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

	w->link.prev = w->link.next = NULL;
	if (s) {
		block(p, s, w);
		return;
	}
	w->state = TJ_STATUS_PASS_QUEUED;
	tj_list_append(&p->queued, &w->link);
}

void tj_status_pass_remove(struct tj_status_pass *p, struct tj_status_pass_waiter *w)
{
	switch (w->state) {
	case TJ_STATUS_PASS_IDLE:
		return;
	case TJ_STATUS_PASS_QUEUED:
		tj_list_unlink(&p->queued, &w->link);
		break;
	case TJ_STATUS_PASS_STALE:
		tj_list_unlink(&p->stale, &w->link);
		break;
	case TJ_STATUS_PASS_BLOCKED:
		for (size_t i = 0; i < n_slots(p); i++)
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
		struct tj_status_pass_waiter *w = first_of(&p->queued);
		struct tj_status_pass_slot *s = slot_of(p, w->key);

		tj_list_unlink(&p->queued, &w->link);
		/* Two waiters of one job queued (the first was not superseded): the second waits
		 * for the first's write. */
		if (s) {
			block(p, s, w);
			continue;
		}
		p->slots[n_slots(p)] = (struct tj_status_pass_slot){ .key = w->key };
		p->n_in_flight++;
		w->state = TJ_STATUS_PASS_IDLE;
		return w;
	}
	return NULL;
}

bool tj_status_pass_begin(struct tj_status_pass *p, const char *key)
{
	if (p->n_others >= TJ_STATUS_PASS_MAX_OTHERS || slot_of(p, key))
		return false;
	p->slots[n_slots(p)] = (struct tj_status_pass_slot){ .key = key, .other = true };
	p->n_others++;
	return true;
}

bool tj_status_pass_in_flight(const struct tj_status_pass *p, const char *key)
{
	return slot_of(p, key) != NULL;
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
	if (s->other)
		p->n_others--;
	else
		p->n_in_flight--;
	/* The last slot in use moves into the freed one. */
	*s = p->slots[n_slots(p)];
}

struct tj_status_pass_waiter *tj_status_pass_take_stale(struct tj_status_pass *p)
{
	struct tj_status_pass_waiter *w = first_of(&p->stale);

	if (w) {
		tj_list_unlink(&p->stale, &w->link);
		w->state = TJ_STATUS_PASS_IDLE;
	}
	return w;
}

bool tj_status_pass_pending(const struct tj_status_pass *p)
{
	return p->queued.head || p->stale.head;
}
