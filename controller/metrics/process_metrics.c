/* process_* sampled from procfs at each render, as Prometheus's Go client samples them. */
#include "controller/metrics/process_metrics.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "base/fileio.h"

struct process {
	char *proc_root;                                                 /* owned */
	struct tj_metric *cpu, *open_fds, *max_fds, *vmem, *rss, *start; /* the registry's */
};

/* procfs files are read whole: /proc/stat grows with the number of CPUs. */
#define PROC_FILE_MAX (1u << 20)

/* Reads root/rel into a new NUL-terminated buffer. */
static int read_proc_file(const char *root, const char *rel, char **ret)
{
	char path[512];
	size_t len;

	if ((size_t)snprintf(path, sizeof(path), "%s/%s", root, rel) >= sizeof(path))
		return -ENAMETOOLONG;
	return tj_read_file(path, PROC_FILE_MAX, 0, ret, &len);
}

static void set_gauge(struct tj_metric *m, double v)
{
	tj_metric_set(m, NULL, v);
}

/* /proc/self/stat: the fields after the command name, which may itself hold spaces and
 * parentheses, so the scan starts after the last ')'. Field 14 is utime, 15 stime, 22
 * starttime (clock ticks since boot), 23 vsize (bytes), 24 rss (pages). */
static void collect_stat(struct process *proc)
{
	char *buf, *sys;
	struct tj_series *cpu;
	unsigned long long utime, stime, start, vsize;
	long long rss;
	const char *p, *btime;
	long ticks = sysconf(_SC_CLK_TCK), page = sysconf(_SC_PAGESIZE);
	int n;

	if (read_proc_file(proc->proc_root, "self/stat", &buf) < 0)
		return;
	p = strrchr(buf, ')');
	n = p ? sscanf(p + 1,
	               " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %*d %*d %*d %*d"
	               " %*d %*d %llu %llu %lld",
	               &utime, &stime, &start, &vsize, &rss)
	      : 0;
	free(buf);
	if (n != 5)
		return;
	/* A counter that is sampled, not fed. */
	if (tj_metric_series(proc->cpu, NULL, &cpu) == 0)
		tj_series_set_total(cpu, (double)(utime + stime) / (double)ticks);
	set_gauge(proc->vmem, (double)vsize);
	set_gauge(proc->rss, (double)rss * (double)page);
	if (read_proc_file(proc->proc_root, "stat", &sys) < 0)
		return;
	btime = strstr(sys, "\nbtime ");
	if (btime)
		set_gauge(proc->start, strtod(btime + 7, NULL) + (double)start / (double)ticks);
	free(sys);
}

static void collect_fds(struct process *proc)
{
	char path[512], *buf;
	const char *line;
	struct dirent *e;
	double n = 0;
	DIR *d;

	snprintf(path, sizeof(path), "%s/self/fd", proc->proc_root);
	d = opendir(path);
	if (d) {
		while ((e = readdir(d)))
			if (e->d_name[0] != '.')
				n++;
		closedir(d);
		set_gauge(proc->open_fds, n);
	}
	if (read_proc_file(proc->proc_root, "self/limits", &buf) < 0)
		return;
	line = strstr(buf, "Max open files");
	if (line) {
		char *end;
		double soft = strtod(line + strlen("Max open files"), &end);

		if (end != line + strlen("Max open files"))
			set_gauge(proc->max_fds, soft);
	}
	free(buf);
}

static void collect_process(void *userdata)
{
	struct process *p = userdata;

	collect_stat(p);
	collect_fds(p);
}

static void process_free(void *userdata)
{
	struct process *p = userdata;

	free(p->proc_root);
	free(p);
}

int tj_metrics_register_process(struct tj_metrics *reg, const char *proc_root)
{
	struct process *p = calloc(1, sizeof(*p));
	int r = -ENOMEM;

	if (!p)
		return -ENOMEM;
	const struct {
		struct tj_metric_desc desc;
		struct tj_metric **out;
	} families[] = {
		{ TJ_COUNTER("process_cpu_seconds_total",
		             "Total user and system CPU time spent in seconds", NULL),
		  &p->cpu },
		{ TJ_GAUGE("process_open_fds", "Number of open file descriptors", NULL),
		  &p->open_fds },
		{ TJ_GAUGE("process_max_fds", "Maximum number of open file descriptors", NULL),
		  &p->max_fds },
		{ TJ_GAUGE("process_virtual_memory_bytes", "Virtual memory size in bytes", NULL),
		  &p->vmem },
		{ TJ_GAUGE("process_resident_memory_bytes", "Resident memory size in bytes", NULL),
		  &p->rss },
		{ TJ_GAUGE("process_start_time_seconds",
		           "Start time of the process since the Unix epoch in seconds", NULL),
		  &p->start },
	};

	p->proc_root = strdup(proc_root);
	if (!p->proc_root)
		goto out_free;
	/* A second call meets its first family taken: -EEXIST. */
	for (size_t i = 0; i < sizeof(families) / sizeof(families[0]); i++) {
		r = tj_metrics_register(reg, &families[i].desc, families[i].out);
		if (r < 0)
			goto out_free;
	}
	r = tj_metrics_add_collector(reg, collect_process, process_free, p);
	if (r < 0)
		goto out_free;
	return 0;

out_free:
	process_free(p);
	return r;
}
