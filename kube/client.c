/* The API client: transport, options, rate limiter, and what is in flight. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kube/client.h"
#include "kube/ratelimit.h"

#define DEFAULT_MAX_RETRIES    10 /* client-go's maxRetries for Retry-After answers */
#define DEFAULT_MAX_RETRY_WAIT 30000
#define DEFAULT_TIMEOUT_MS     60000

struct tj_client {
	uv_loop_t *loop;
	struct tj_transport *transport; /* owned */
	struct tj_client_options opts;  /* defaults filled in */
	struct tj_token_bucket bucket;
	char *namespace;              /* owned */
	struct tj_client_user *users; /* borrowed list of what is in flight */
};

int tj_client_new(uv_loop_t *loop, const struct tj_kube_config *cfg,
                  const struct tj_client_options *opts, struct tj_client **ret)
{
	struct tj_client *c = calloc(1, sizeof(*c));
	int r;

	if (!c)
		return -ENOMEM;
	c->loop = loop;
	if (opts)
		c->opts = *opts;
	if (c->opts.max_retries == 0)
		c->opts.max_retries = DEFAULT_MAX_RETRIES;
	else if (c->opts.max_retries < 0)
		c->opts.max_retries = 0;
	if (c->opts.max_retry_delay_ms <= 0)
		c->opts.max_retry_delay_ms = DEFAULT_MAX_RETRY_WAIT;
	if (c->opts.timeout_ms <= 0)
		c->opts.timeout_ms = DEFAULT_TIMEOUT_MS;
	if (c->opts.resend_first_ms <= 0)
		c->opts.resend_first_ms = TJ_KUBE_RESEND_FIRST_MS;
	if (c->opts.max_body == 0)
		c->opts.max_body = TJ_HTTP_MAX_BODY;
	tj_token_bucket_init(&c->bucket, c->opts.qps, c->opts.burst, uv_now(loop));
	c->namespace = strdup(cfg->namespace ? cfg->namespace : "default");
	if (!c->namespace) {
		r = -ENOMEM;
		goto out_free;
	}
	r = tj_transport_new(loop, cfg, &c->opts.transport, &c->transport);
	if (r < 0)
		goto out_free;
	*ret = c;
	return 0;

out_free:
	free(c->namespace);
	free(c);
	return r;
}

uv_loop_t *tj_client_loop(const struct tj_client *c)
{
	return c->loop;
}

const char *tj_client_namespace(const struct tj_client *c)
{
	return c->namespace;
}

struct tj_transport *tj_client_transport(const struct tj_client *c)
{
	return c->transport;
}

const struct tj_client_options *tj_client_options(const struct tj_client *c)
{
	return &c->opts;
}

uint64_t tj_client_admit(struct tj_client *c)
{
	return tj_token_bucket_take(&c->bucket, uv_now(c->loop));
}

void tj_client_attach(struct tj_client *c, struct tj_client_user *u)
{
	u->prev = NULL;
	u->next = c->users;
	if (c->users)
		c->users->prev = u;
	c->users = u;
}

void tj_client_detach(struct tj_client *c, struct tj_client_user *u)
{
	if (u->prev)
		u->prev->next = u->next;
	else if (c->users == u)
		c->users = u->next;
	if (u->next)
		u->next->prev = u->prev;
	u->prev = u->next = NULL;
}

struct tj_client *tj_client_free(struct tj_client *c)
{
	struct tj_client_user *u;

	if (!c)
		return NULL;
	while ((u = c->users)) {
		tj_client_detach(c, u);
		u->abort(u);
	}
	tj_transport_free(c->transport);
	free(c->namespace);
	free(c);
	return NULL;
}
