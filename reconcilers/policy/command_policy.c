#include "reconcilers/policy/command_policy.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/utf8.h"
#include "reconcilers/json.h"
#include "reconcilers/policy/shell_lex.h"

/* Compound commands nested deeper than this are not read (nor is the script). */
#define MAX_DEPTH 64
/* sh -c 'bash -c "..."': shells within shells read, at most. */
#define MAX_SHELLS 4
/* Words of a container's command line, at most (the CRD allows 128 in command and args). */
#define MAX_ARGV 1024

enum constant {
	UNKNOWN,
	ALWAYS_TRUE,
	ALWAYS_FALSE,
};

/* What a piece of a script does to the loops around it. */
struct flow {
	bool exits;   /* exit, return or exec: the loops around it can end */
	int breaks;   /* break N reaching out of this piece: N levels, 0 for none */
	int constant; /* enum constant: its exit status when it is known before it runs */
};

/* Where a simple command's input and output go. */
struct io {
	bool reads_pipe; /* fed by the command before it in a pipeline */
	bool redirected; /* standard input from a file, a here-document or a here-string */
	bool writes_pipe;
};

struct parser {
	const struct tj_command_rules *rules;
	const struct tj_sh_token *t; /* borrowed; the script being read */
	size_t n, pos;
	int depth, shells;
	/* The first command found that never exits, in the foreground... */
	bool have;
	struct tj_command_finding found;
	/* ...and in the background, which a later `wait` waits for. */
	bool have_bg;
	struct tj_command_finding bg;
	/* Too long or too deeply nested to read: refused whatever else it holds. */
	bool unreadable;
	char unreadable_why[TJ_MESSAGE_MAX / 2];
	bool oom;
};

static bool is(const struct tj_sh_token *t, const char *word)
{
	return t && t->kind == TJ_SH_WORD && !t->quoted && strcmp(t->text, word) == 0;
}

static const struct tj_sh_token *peek(const struct parser *p)
{
	return p->pos < p->n ? &p->t[p->pos] : NULL;
}

static bool peek_kind(const struct parser *p, enum tj_sh_kind kind)
{
	return p->pos < p->n && p->t[p->pos].kind == kind;
}

static void skip_newlines(struct parser *p)
{
	while (peek_kind(p, TJ_SH_NEWLINE))
		p->pos++;
}

/* The end of a list: the end of the script, ), ;; or a reserved word that closes a
 * compound command. */
static bool at_list_end(const struct parser *p)
{
	static const char *const closers[] = { "then", "elif", "else", "fi",
		                               "do",   "done", "esac", "}" };
	const struct tj_sh_token *t = peek(p);

	if (!t || t->kind == TJ_SH_RPAREN || t->kind == TJ_SH_CASE_END)
		return true;
	for (size_t i = 0; i < sizeof(closers) / sizeof(closers[0]); i++)
		if (is(t, closers[i]))
			return true;
	return false;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* Appends s to buf[*len..size): control characters as spaces, bytes that are not UTF-8 as
 * '?', so that the part can go into a status message. */
static void append(char *buf, size_t size, size_t *len, const char *s)
{
	size_t n = strlen(s);

	while (n > 0 && *len + 1 < size) {
		size_t k = tj_utf8_sequence(s, n);

		if (k > 1) {
			if (*len + k >= size)
				break;
			memcpy(buf + *len, s, k);
		} else {
			k = 1;
			if (*s & 0x80)
				buf[*len] = '?';
			else if ((unsigned char)*s < 0x20 || *s == 0x7f)
				buf[*len] = ' ';
			else
				buf[*len] = *s;
		}
		*len += k;
		s += k;
		n -= k;
	}
	buf[*len] = '\0';
}

/* The tokens joined by spaces (none before a ;), cut with "..." (at a UTF-8 boundary) when
 * too long. */
static void join(const struct tj_sh_token *const *w, size_t n, char *buf, size_t size)
{
	char tmp[TJ_COMMAND_PART_MAX + 8];
	size_t len = 0;

	tmp[0] = '\0';
	for (size_t i = 0; i < n && len + 1 < sizeof(tmp); i++) {
		if (i > 0 && w[i]->kind != TJ_SH_SEMI)
			append(tmp, sizeof(tmp), &len, " ");
		append(tmp, sizeof(tmp), &len, w[i]->text);
	}
	if (len >= size) {
		len = size - 4;
		while (len > 0 && ((unsigned char)tmp[len] & 0xc0) == 0x80)
			len--;
		memcpy(tmp + len, "...", 4);
	}
	snprintf(buf, size, "%s", tmp);
}

/* Whether a newline after t separates commands (and reads as "; "), rather than only
 * continuing what t began (do, then, &&, |, ...). */
static bool separates(const struct tj_sh_token *t)
{
	static const char *const openers[] = { "do", "then", "else", "elif", "{", "in", "!" };

	if (t->kind != TJ_SH_WORD)
		return t->kind == TJ_SH_RPAREN || t->kind == TJ_SH_ARITH;
	for (size_t i = 0; i < sizeof(openers) / sizeof(openers[0]); i++)
		if (is(t, openers[i]))
			return false;
	return true;
}

/* The tokens [from, to) of the script as a part: words and operators, newlines as "; ". */
static void span(const struct parser *p, size_t from, size_t to, char *buf, size_t size)
{
	const struct tj_sh_token *w[TJ_COMMAND_PART_MAX / 2];
	static const struct tj_sh_token semi = { .kind = TJ_SH_SEMI, .text = ";" };
	size_t n = 0;

	for (size_t i = from; i < to && n < sizeof(w) / sizeof(w[0]); i++) {
		const struct tj_sh_token *t = &p->t[i];

		if (t->kind == TJ_SH_NEWLINE) {
			if (n == 0 || !separates(w[n - 1]))
				continue;
			t = &semi;
		}
		w[n++] = t;
	}
	join(w, n, buf, size);
}

static void find(struct parser *p, enum tj_command_verdict verdict, const char *part,
                 const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* Records the first command that never exits; text follows "'<part>' ". */
static void find(struct parser *p, enum tj_command_verdict verdict, const char *part,
                 const char *fmt, ...)
{
	char rest[256];
	va_list ap;

	if (p->have)
		return;
	p->have = true;
	p->found.verdict = verdict;
	snprintf(p->found.part, sizeof(p->found.part), "%s", part);
	va_start(ap, fmt);
	vsnprintf(rest, sizeof(rest), fmt, ap);
	va_end(ap);
	snprintf(p->found.text, sizeof(p->found.text), "'%s' %s", part, rest);
}

static void cannot_read(struct parser *p, const char *why)
{
	if (p->unreadable)
		return;
	p->unreadable = true;
	snprintf(p->unreadable_why, sizeof(p->unreadable_why), "%s", why);
	p->pos = p->n;
}

/* A sleep operand in seconds (GNU sleep: a number with an optional suffix s, m, h or d;
 * "inf" and "infinity" in any case). false for anything else: sleep refuses it and exits. */
static bool duration(const char *s, double *ret)
{
	char *end;
	double v = strtod(s, &end);
	double unit = 1;

	if (end == s || isnan(v) || v < 0)
		return false;
	if (*end && !end[1]) {
		switch (*end) {
		case 's':
			break;
		case 'm':
			unit = 60;
			break;
		case 'h':
			unit = 3600;
			break;
		case 'd':
			unit = 86400;
			break;
		default:
			return false;
		}
	} else if (*end) {
		return false;
	}
	*ret = v * unit;
	return true;
}

static void check_sleep(struct parser *p, const struct tj_sh_token *const *w, size_t n,
                        const char *part)
{
	double total = 0, d;
	size_t operands = 0;

	for (size_t i = 1; i < n; i++) {
		if (w[i]->expands)
			return;
		if (strcmp(w[i]->text, "--") == 0 && i == 1)
			continue;
		if (!duration(w[i]->text, &d))
			return;
		total += d;
		operands++;
	}
	if (operands == 0)
		return;
	if (isinf(total))
		find(p, TJ_COMMAND_SLEEPS_FOREVER, part, "never exits");
	else if (p->rules->walltime > 0 && total >= (double)p->rules->walltime)
		find(p, TJ_COMMAND_SLEEPS_PAST_WALLTIME, part,
		     "sleeps %.0f s, as long as the job's walltime of %lld s or longer, so the job "
		     "can never finish by itself",
		     total, (long long)p->rules->walltime);
}

/* tail's options that take a value (short, or long without =value). */
static bool tail_takes_value(const char *opt)
{
	static const char *const longs[] = { "--bytes", "--lines", "--pid", "--sleep-interval",
		                             "--max-unchanged-stats" };

	for (size_t i = 0; i < sizeof(longs) / sizeof(longs[0]); i++)
		if (strcmp(opt, longs[i]) == 0)
			return true;
	return false;
}

static void check_tail(struct parser *p, const struct tj_sh_token *const *w, size_t n,
                       const struct io *io, const char *part)
{
	bool follow = false, pid = false, options = true;
	size_t files = 0, real_files = 0;

	for (size_t i = 1; i < n; i++) {
		const char *a = w[i]->text;

		if (!options || a[0] != '-' || !a[1]) {
			files++;
			real_files += strcmp(a, "/dev/null") != 0 || w[i]->expands;
		} else if (strcmp(a, "--") == 0) {
			options = false;
		} else if (a[1] == '-') {
			follow |= strncmp(a, "--follow", 8) == 0;
			pid |= strncmp(a, "--pid", 5) == 0;
			if (tail_takes_value(a))
				i++;
		} else {
			for (const char *c = a + 1; *c; c++) {
				follow |= *c == 'f' || *c == 'F';
				if (strchr("cns", *c)) {
					i += !c[1];
					break;
				}
			}
		}
	}
	if (!follow || pid)
		return;
	/* GNU tail ignores -f on a pipe; on the container's own standard input (or a file
	 * redirected to it) and on /dev/null it waits for ever. A real file's follower ends
	 * when the reader of its pipe does. */
	if ((files == 0 && !io->reads_pipe) || (files > 0 && real_files == 0))
		find(p, TJ_COMMAND_FOLLOWS, part,
		     "never exits (it follows /dev/null or standard input for ever)");
	else if (real_files > 0 && !io->writes_pipe)
		find(p, TJ_COMMAND_FOLLOWS, part,
		     "never exits (it follows its files for ever; tail --pid ends with a process)");
}

static void check_cat(struct parser *p, const struct tj_sh_token *const *w, size_t n,
                      const struct io *io, const char *part)
{
	bool options = true;

	if (io->reads_pipe || io->redirected)
		return;
	for (size_t i = 1; i < n; i++) {
		const char *a = w[i]->text;

		if (options && strcmp(a, "--") == 0)
			options = false;
		else if (!(options && a[0] == '-' && a[1]) && strcmp(a, "-") != 0)
			return;
	}
	find(p, TJ_COMMAND_READS_STDIN, part,
	     "never exits (cat with no input waits on standard input, which nothing closes)");
}

static void check_sshd(struct parser *p, const struct tj_sh_token *const *w, size_t n,
                       const char *part)
{
	bool foreground = false;

	for (size_t i = 1; i < n; i++) {
		const char *a = w[i]->text;

		if (a[0] != '-' || a[1] == '-')
			continue;
		for (const char *c = a + 1; *c; c++) {
			foreground |= *c == 'D';
			/* OpenSSH's options with a value: -b -C -c -E -f -g -h -k -o -p -u. */
			if (strchr("bCcEfghkopu", *c)) {
				i += !c[1];
				break;
			}
		}
	}
	if (foreground && !p->rules->ended_by_success_policy)
		find(p, TJ_COMMAND_SSHD, part,
		     "never exits (sshd -D serves until it is stopped, and no success policy "
		     "of the runtime stops this step)");
}

static void parse_script(struct parser *p, const char *script);

/* sh -c SCRIPT (options may come first, -c inside a cluster: -lc, -ec, -xec). */
static void check_shell(struct parser *p, const struct tj_sh_token *const *w, size_t n)
{
	bool command = false;
	size_t i;

	for (i = 1; i < n; i++) {
		const char *a = w[i]->text;
		bool value = false;

		if (strcmp(a, "--") == 0 || strcmp(a, "-") == 0) {
			i++;
			break;
		}
		if ((a[0] != '-' && a[0] != '+') || !a[1])
			break;
		if (a[1] == '-') {
			value = strcmp(a, "--rcfile") == 0 || strcmp(a, "--init-file") == 0;
		} else {
			for (const char *c = a + 1; *c; c++) {
				command |= *c == 'c';
				value |= *c == 'o' || *c == 'O';
			}
		}
		i += value;
	}
	if (command && i < n && !w[i]->expands)
		parse_script(p, w[i]->text);
}

static bool is_assignment(const struct tj_sh_token *t)
{
	const char *s = t->text;

	if (t->quoted && !strchr(s, '='))
		return false;
	if (!(*s == '_' || (*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z')))
		return false;
	while (*s == '_' || (*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') ||
	       (*s >= '0' && *s <= '9'))
		s++;
	return *s == '=' || (*s == '+' && s[1] == '=');
}

/* Skips the words of a wrapper that runs the rest as a command: exec, command, builtin,
 * nohup, time, env (its options and assignments). Returns the index of the command. */
static size_t unwrap(const struct tj_sh_token *const *w, size_t n, size_t i, bool *exec)
{
	while (i < n && !w[i]->expands) {
		const char *name = base_name(w[i]->text);

		if (strcmp(name, "exec") == 0)
			*exec = true;
		else if (strcmp(name, "env") == 0) {
			for (i++; i < n && (w[i]->text[0] == '-' || is_assignment(w[i])); i++) {
				if (strcmp(w[i]->text, "--") == 0) {
					i++;
					break;
				}
				/* The option's argument, when there is one: "env -u" alone at
				 * the end runs nothing. */
				i += (strcmp(w[i]->text, "-u") == 0 ||
				      strcmp(w[i]->text, "-C") == 0) &&
				     i + 1 < n;
			}
			continue;
		} else if (strcmp(name, "command") != 0 && strcmp(name, "builtin") != 0 &&
		           strcmp(name, "nohup") != 0 && strcmp(name, "time") != 0)
			break;
		for (i++; i < n && w[i]->text[0] == '-' && w[i]->text[1]; i++)
			;
	}
	return i;
}

static bool is_shell(const char *name)
{
	static const char *const shells[] = { "sh", "bash", "dash", "ash", "ksh", "mksh", "zsh" };

	for (size_t i = 0; i < sizeof(shells) / sizeof(shells[0]); i++)
		if (strcmp(name, shells[i]) == 0)
			return true;
	return false;
}

/* One simple command: its words, the redirections left out by the caller. */
static void simple_command(struct parser *p, const struct tj_sh_token *const *words, size_t n,
                           const struct io *io, struct flow *f)
{
	char part[TJ_COMMAND_PART_MAX];
	bool exec = false;
	size_t i = 0;
	const char *name;

	while (i < n && is_assignment(words[i]))
		i++;
	i = unwrap(words, n, i, &exec);
	f->exits = exec && i < n;
	if (i == n || words[i]->expands)
		return;
	join(words, n, part, sizeof(part));
	words += i;
	n -= i;
	name = base_name(words[0]->text);
	if (strcmp(name, "true") == 0 || strcmp(name, ":") == 0) {
		f->constant = ALWAYS_TRUE;
	} else if (strcmp(name, "false") == 0) {
		f->constant = ALWAYS_FALSE;
	} else if (strcmp(name, "break") == 0) {
		long levels = n > 1 ? strtol(words[1]->text, NULL, 10) : 1;

		/* break 0 or a word that is no number counts as break 1: at worst a pass. */
		f->breaks = levels < 1 ? 1 : levels > MAX_DEPTH ? MAX_DEPTH : (int)levels;
	} else if (strcmp(name, "exit") == 0 || strcmp(name, "return") == 0) {
		f->exits = true;
	} else if (strcmp(name, "wait") == 0) {
		if (p->have_bg)
			find(p, TJ_COMMAND_WAITS, part, "waits for '%s', which never exits",
			     p->bg.part);
	} else if (strcmp(name, "sleep") == 0) {
		check_sleep(p, words, n, part);
	} else if (strcmp(name, "tail") == 0) {
		check_tail(p, words, n, io, part);
	} else if (strcmp(name, "cat") == 0) {
		check_cat(p, words, n, io, part);
	} else if (strcmp(name, "sshd") == 0) {
		check_sshd(p, words, n, part);
	} else if (is_shell(name)) {
		check_shell(p, words, n);
	}
}

static void list(struct parser *p, struct flow *f);
static void command(struct parser *p, bool first, struct flow *f);

static void merge(struct flow *into, const struct flow *f)
{
	into->exits |= f->exits;
	if (f->breaks > into->breaks)
		into->breaks = f->breaks;
}

/* A simple command of the script: up to the operator that ends it. */
static void script_command(struct parser *p, bool first, struct flow *f)
{
	const struct tj_sh_token **words;
	struct io io = { .reads_pipe = !first };
	size_t start = p->pos, n = 0;

	while (p->pos < p->n) {
		const struct tj_sh_token *t = &p->t[p->pos];

		if (t->kind == TJ_SH_WORD || t->kind == TJ_SH_ARITH) {
			p->pos++;
		} else if (t->kind == TJ_SH_REDIRECT) {
			io.redirected |= t->text[0] == '<';
			p->pos += p->pos + 1 < p->n && p->t[p->pos + 1].kind == TJ_SH_WORD ? 2 : 1;
		} else if (t->kind == TJ_SH_LPAREN && p->pos > start) {
			/* An array assignment, a=(1 2): its words are no command. */
			while (p->pos < p->n && p->t[p->pos].kind != TJ_SH_RPAREN)
				p->pos++;
			p->pos += p->pos < p->n;
		} else {
			break;
		}
	}
	io.writes_pipe = peek_kind(p, TJ_SH_PIPE);
	words = calloc(p->pos - start + 1, sizeof(*words));
	if (!words) {
		p->oom = true;
		return;
	}
	for (size_t i = start; i < p->pos; i++) {
		const struct tj_sh_token *t = &p->t[i];

		if (t->kind == TJ_SH_REDIRECT)
			i += i + 1 < p->pos && p->t[i + 1].kind == TJ_SH_WORD;
		else if (t->kind == TJ_SH_WORD)
			words[n++] = t;
	}
	simple_command(p, words, n, &io, f);
	free(words);
}

static void expect(struct parser *p, const char *word)
{
	if (is(peek(p), word))
		p->pos++;
}

/* while/until LIST; do LIST; done: a loop whose condition never changes and whose body
 * has no way out runs for ever. */
static void loop(struct parser *p, struct flow *f)
{
	bool until = is(peek(p), "until");
	struct flow cond = { 0 }, body = { 0 };
	size_t start = p->pos;
	char part[TJ_COMMAND_PART_MAX];

	p->pos++;
	list(p, &cond);
	if (!is(peek(p), "do"))
		return;
	p->pos++;
	list(p, &body);
	expect(p, "done");
	if (cond.constant == (until ? ALWAYS_FALSE : ALWAYS_TRUE) && !body.exits &&
	    body.breaks == 0) {
		span(p, start, p->pos, part, sizeof(part));
		find(p, TJ_COMMAND_LOOPS, part,
		     "never exits (its condition is always %s and nothing in it breaks out or "
		     "exits)",
		     until ? "false" : "true");
	}
	f->exits = body.exits;
	f->breaks = body.breaks > 1 ? body.breaks - 1 : 0;
}

/* for NAME [in WORDS]; do LIST; done (and select, for ((...))). */
static void for_loop(struct parser *p, struct flow *f)
{
	struct flow body = { 0 };

	p->pos++;
	while (p->pos < p->n && !is(peek(p), "do") && !at_list_end(p))
		p->pos++;
	if (!is(peek(p), "do"))
		return;
	p->pos++;
	list(p, &body);
	expect(p, "done");
	f->exits = body.exits;
	f->breaks = body.breaks > 1 ? body.breaks - 1 : 0;
}

static void if_clause(struct parser *p, struct flow *f)
{
	struct flow part;

	do {
		p->pos++;
		list(p, &part);
		merge(f, &part);
		expect(p, "then");
		list(p, &part);
		merge(f, &part);
	} while (is(peek(p), "elif"));
	if (is(peek(p), "else")) {
		p->pos++;
		list(p, &part);
		merge(f, &part);
	}
	expect(p, "fi");
}

static void case_clause(struct parser *p, struct flow *f)
{
	struct flow part;

	p->pos++;
	p->pos += p->pos < p->n; /* the word */
	skip_newlines(p);
	expect(p, "in");
	for (;;) {
		skip_newlines(p);
		if (!peek(p) || is(peek(p), "esac"))
			break;
		while (p->pos < p->n && p->t[p->pos].kind != TJ_SH_RPAREN)
			p->pos++;
		if (!peek(p))
			break;
		p->pos++;
		list(p, &part);
		merge(f, &part);
		if (!peek_kind(p, TJ_SH_CASE_END))
			break;
		p->pos++;
	}
	expect(p, "esac");
}

/* A function's body runs only when it is called, which is not followed: read it for its
 * syntax, and forget what it holds. */
static void function_body(struct parser *p)
{
	bool had = p->have, had_bg = p->have_bg;
	struct flow ignored = { 0 };

	skip_newlines(p);
	command(p, true, &ignored);
	p->have = had;
	p->have_bg = had_bg;
}

static int arith_constant(const char *expr)
{
	char *end;
	long v;

	while (*expr == ' ' || *expr == '\t')
		expr++;
	v = strtol(expr, &end, 10);
	if (end == expr)
		return UNKNOWN;
	while (*end == ' ' || *end == '\t')
		end++;
	return *end ? UNKNOWN : v ? ALWAYS_TRUE : ALWAYS_FALSE;
}

static void command(struct parser *p, bool first, struct flow *f)
{
	const struct tj_sh_token *t = peek(p);

	*f = (struct flow){ 0 };
	if (!t)
		return;
	if (++p->depth > MAX_DEPTH) {
		cannot_read(p, "the script nests commands deeper than the command policy reads");
	} else if (t->kind == TJ_SH_LPAREN) {
		p->pos++;
		list(p, f);
		if (peek_kind(p, TJ_SH_RPAREN))
			p->pos++;
		/* A subshell's exit and break end the subshell only. */
		f->exits = false;
		f->breaks = 0;
	} else if (t->kind == TJ_SH_ARITH) {
		p->pos++;
		f->constant = arith_constant(t->text);
	} else if (is(t, "{")) {
		p->pos++;
		list(p, f);
		expect(p, "}");
	} else if (is(t, "while") || is(t, "until")) {
		loop(p, f);
	} else if (is(t, "for") || is(t, "select")) {
		for_loop(p, f);
	} else if (is(t, "if")) {
		if_clause(p, f);
	} else if (is(t, "case")) {
		case_clause(p, f);
	} else if (is(t, "function")) {
		p->pos += p->pos + 1 < p->n ? 2 : 1;
		if (peek_kind(p, TJ_SH_LPAREN) && p->pos + 1 < p->n &&
		    p->t[p->pos + 1].kind == TJ_SH_RPAREN)
			p->pos += 2;
		function_body(p);
	} else if (t->kind == TJ_SH_WORD && p->pos + 2 < p->n &&
	           p->t[p->pos + 1].kind == TJ_SH_LPAREN && p->t[p->pos + 2].kind == TJ_SH_RPAREN) {
		p->pos += 3;
		function_body(p);
	} else {
		script_command(p, first, f);
	}
	p->depth--;
}

static void pipeline(struct parser *p, struct flow *f)
{
	struct flow c;
	bool negate = false;
	size_t count = 0;

	*f = (struct flow){ 0 };
	while (is(peek(p), "!")) {
		negate = !negate;
		p->pos++;
	}
	do {
		if (count > 0) {
			p->pos++;
			skip_newlines(p);
		}
		command(p, count == 0, &c);
		merge(f, &c);
		f->constant = c.constant;
		count++;
	} while (!p->oom && peek_kind(p, TJ_SH_PIPE));
	/* Each command of a longer pipeline runs in a subshell of its own. */
	if (count > 1)
		*f = (struct flow){ 0 };
	if (negate && f->constant != UNKNOWN)
		f->constant = f->constant == ALWAYS_TRUE ? ALWAYS_FALSE : ALWAYS_TRUE;
}

static void and_or(struct parser *p, struct flow *f)
{
	struct flow next;

	pipeline(p, f);
	while (!p->oom && (peek_kind(p, TJ_SH_AND) || peek_kind(p, TJ_SH_OR))) {
		p->pos++;
		skip_newlines(p);
		pipeline(p, &next);
		merge(f, &next);
		f->constant = UNKNOWN;
	}
}

/* A list of and-or lists, separated by ; & or newlines, up to the end of its compound
 * command. Its status is its last command's. */
static void list(struct parser *p, struct flow *f)
{
	*f = (struct flow){ 0 };
	for (;;) {
		struct flow item;
		size_t start;
		bool had;

		while (peek_kind(p, TJ_SH_NEWLINE) || peek_kind(p, TJ_SH_SEMI))
			p->pos++;
		if (p->oom || at_list_end(p))
			return;
		start = p->pos;
		had = p->have;
		and_or(p, &item);
		if (p->pos == start) {
			/* An operator where a command should be: the shell would refuse it. */
			p->pos++;
			continue;
		}
		if (peek_kind(p, TJ_SH_AMP)) {
			p->pos++;
			/* In the background it does not hold the script up, unless waited for. */
			if (!had && p->have) {
				p->have = false;
				if (!p->have_bg) {
					p->have_bg = true;
					p->bg = p->found;
				}
			}
			item = (struct flow){ 0 };
		}
		merge(f, &item);
		f->constant = item.constant;
	}
}

/* Reads a script given to a shell: its own tokens and its own background jobs. */
static void parse_script(struct parser *p, const char *script)
{
	struct parser inner = { .rules = p->rules, .depth = p->depth, .shells = p->shells + 1 };
	struct tj_sh_lex lex = { 0 };
	struct flow f;
	int r;

	if (p->have || p->unreadable || p->shells >= MAX_SHELLS)
		return;
	r = tj_sh_lex(script, strlen(script), &lex);
	if (r == -ENOMEM) {
		p->oom = true;
		return;
	}
	if (r == -E2BIG) {
		cannot_read(p, "the script is longer than the command policy reads (64 KiB, 8192 "
		               "words); put it in a file of the image or of a volume");
		return;
	}
	if (r < 0)
		return;
	inner.t = lex.tokens;
	inner.n = lex.n;
	while (inner.pos < inner.n && !inner.oom && !inner.have && !inner.unreadable) {
		list(&inner, &f);
		/* A closer without its opener (a stray done or fi): the shell refuses the
		 * script; read on after it. */
		inner.pos += inner.pos < inner.n;
	}
	p->oom |= inner.oom;
	if (inner.unreadable)
		cannot_read(p, inner.unreadable_why);
	if (inner.have) {
		p->have = true;
		p->found = inner.found;
	}
	tj_sh_lex_clear(&lex);
}

int tj_command_check(const char *const *argv, size_t argc, const struct tj_command_rules *rules,
                     struct tj_command_finding *ret)
{
	struct parser p = { .rules = rules };
	struct tj_sh_token *tokens;
	const struct tj_sh_token **words;
	struct io io = { 0 };
	struct flow f = { 0 };

	if (argc > MAX_ARGV)
		argc = MAX_ARGV;
	tokens = calloc(argc + 1, sizeof(*tokens));
	words = calloc(argc + 1, sizeof(*words));
	if (!tokens || !words) {
		free(tokens);
		free(words);
		return -ENOMEM;
	}
	for (size_t i = 0; i < argc; i++) {
		/* The kubelet expands $(VAR) in command and args. */
		tokens[i] = (struct tj_sh_token){ .kind = TJ_SH_WORD,
			                          .text = argv[i],
			                          .expands = strstr(argv[i], "$(") != NULL };
		words[i] = &tokens[i];
	}
	simple_command(&p, words, argc, &io, &f);
	free(tokens);
	free(words);
	if (p.oom)
		return -ENOMEM;
	if (p.unreadable) {
		*ret = (struct tj_command_finding){ .verdict = TJ_COMMAND_UNREADABLE };
		snprintf(ret->text, sizeof(ret->text), "%s", p.unreadable_why);
		return -EPERM;
	}
	if (!p.have)
		return 0;
	*ret = p.found;
	return -EPERM;
}

/* The container's command line: command then args; args alone when there is no command. */
static int container_argv(const cJSON *c, const char ***ret, size_t *ret_n)
{
	const cJSON *lists[2] = { cJSON_GetObjectItemCaseSensitive(c, "command"),
		                  cJSON_GetObjectItemCaseSensitive(c, "args") };
	const char **argv;
	size_t n = 0;

	argv = calloc((size_t)cJSON_GetArraySize(lists[0]) + (size_t)cJSON_GetArraySize(lists[1]) +
	                      1,
	              sizeof(*argv));
	if (!argv)
		return -ENOMEM;
	for (int l = 0; l < 2; l++) {
		const cJSON *list = cJSON_IsArray(lists[l]) ? lists[l] : NULL, *el;

		cJSON_ArrayForEach(el, list) argv[n++] = cJSON_IsString(el) ? el->valuestring : "";
	}
	*ret = argv;
	*ret_n = n;
	return 0;
}

int tj_command_check_pod(const cJSON *pod, const char *step, const struct tj_command_rules *rules,
                         struct tj_problem *why)
{
	static const char *const lists[] = { "spec.initContainers", "spec.containers" };

	for (size_t l = 0; l < 2; l++) {
		const cJSON *c;

		cJSON_ArrayForEach(c, tj_json_path(pod, lists[l]))
		{
			struct tj_command_finding f;
			const char **argv;
			size_t n;
			int r;

			/* A sidecar (an init container that restarts Always) is stopped by
			 * Kubernetes once the others are done. */
			if (l == 0 && tj_json_string(c, "restartPolicy") &&
			    strcmp(tj_json_string(c, "restartPolicy"), "Always") == 0)
				continue;
			r = container_argv(c, &argv, &n);
			if (r < 0)
				return r;
			r = tj_command_check(argv, n, rules, &f);
			free(argv);
			if (r == -EPERM) {
				tj_problem_set(
				        why, TJ_REASON_POLICY_VIOLATION,
				        "%s %s of step %s: %s; a job must exit by itself when "
				        "its work is done, so it is refused before any pod starts",
				        l == 0 ? "init container" : "container",
				        tj_or(tj_json_string(c, "name"), "(unnamed)"), step,
				        f.text);
				return -EPERM;
			}
			if (r < 0)
				return r;
		}
	}
	return 0;
}

bool tj_command_exempt(const struct tj_config *config, const struct tj_runtime *runtime,
                       const char *namespace)
{
	if (runtime && runtime->kind == TJ_RUNTIME_CLUSTER && runtime->allow_long_running)
		return true;
	for (size_t i = 0; config && i < config->n_command_exempt_namespaces; i++)
		if (strcmp(config->command_exempt_namespaces[i], namespace) == 0)
			return true;
	return false;
}
