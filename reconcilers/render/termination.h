/* Termination messages: what a failed worker leaves for a person to read. Every container
 * of a rendered pod gets terminationMessagePolicy FallbackToLogsOnError unless its template
 * chose one, so that a crash without a message file still leaves the last lines of its
 * log in the container's status; the planner copies that text, bounded, into
 * status.lastFailure.message and into the Restarting or Failed event. */
#pragma once

#include <stddef.h>

#include <cjson/cJSON.h>

/* Sets terminationMessagePolicy FallbackToLogsOnError on every container of the pod spec
 * (spec.containers) that has no terminationMessagePolicy. 0, or -ENOMEM. */
int tj_termination_policy_default(cJSON *spec);

/* Appends sep and then the end of message to the string in buf (of size bytes), keeping
 * buf a string no longer than size - 1: when the message does not fit, its last bytes
 * are kept (a crash is at the end of a log), starting between UTF-8 sequences and, when
 * the kept part holds a line break, at the start of a line. Bytes that are not UTF-8
 * become '?', trailing white space is dropped, and an empty message (or no room for sep
 * and one byte of it) appends nothing. */
void tj_termination_append(char *buf, size_t size, const char *sep, const char *message);
