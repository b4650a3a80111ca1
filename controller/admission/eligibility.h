/* The nodes each distinct placement of the queue allows (reconcilers/admission/placement.h: the
 * node selector, affinity, tolerations and extended requests of a job's rendered pods), kept
 * between admission cycles as a flag per node of the ledger's name order
 * (controller/admission/ledger.h) and judged again only for the nodes the ledger judged again
 * since, or for every node once the order changed.
 *
 * The jobs whose placements are equal share one (tj_eligibility_intern, when a job's want is
 * told, and again in the cycle for a placement it does not keep yet), so that a cycle finds a
 * job's nodes by its placement's pointer, without comparing the constraints of thousands of
 * queued jobs. Internal to the admitter. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "controller/admission/ledger.h"
#include "informers/store.h"
#include "reconcilers/admission/placement.h"

/* Distinct placements kept between cycles; a placement beyond them is judged on every node
 * in each cycle that asks for it, as it would be without the cache. */
#define TJ_ELIGIBILITY_MAX 1024

struct tj_eligibility;

int tj_eligibility_new(struct tj_eligibility **ret);

/* Drops its references to the placements it keeps. Accepts NULL; returns NULL. */
struct tj_eligibility *tj_eligibility_free(struct tj_eligibility *c);

/* *p (a placement the caller holds a reference to; NULL: none) is replaced by the equal one
 * c keeps, its reference moved there; c keeps *p itself when it keeps none equal and has
 * room. */
void tj_eligibility_intern(struct tj_eligibility *c, struct tj_placement **p);

/* What the nodes of a ledger read are (tj_ledger_read), and the node cache it read. */
struct tj_eligibility_nodes {
	const struct tj_ledger *ledger;
	struct tj_ledger_node *const *order;
	size_t n;
	const struct tj_store *nodes;
};

/* The flags, one per node of the read, of the nodes placement p allows (a node the node cache
 * does not have counts as allowed), into *ret: an array c keeps until its next call. c keeps
 * them (taking a reference to p if it kept no placement equal to it, and has room) until a
 * sweep at another stamp than the last that asked for them. 0 or -ENOMEM. */
int tj_eligibility_flags(struct tj_eligibility *c, struct tj_placement *p,
                         const struct tj_eligibility_nodes *read, uint64_t stamp, const bool **ret);

/* Forgets the placements no cycle asked for at stamp, dropping its references to them. */
void tj_eligibility_sweep(struct tj_eligibility *c, uint64_t stamp);
