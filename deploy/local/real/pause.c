/*
 * The pause program of the real nodes' pod sandboxes: the first process of each pod, which
 * holds the pod's namespaces while its containers come and go. No registry is reachable from
 * the local cluster, so the image is built here from this file (deploy/local/real-nodes.sh).
 *
 * As process 1 of its PID namespace it reaps the children the kernel hands it (when a pod
 * shares its process namespace) and exits 0 on SIGINT or SIGTERM, the stop the container
 * runtime sends first; signals without a handler never reach process 1.
 */
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

static void on_stop(int sig)
{
	(void)sig;
	_exit(0);
}

static void on_child(int sig)
{
	(void)sig;
	while (waitpid(-1, NULL, WNOHANG) > 0) {
	}
}

int main(void)
{
	struct sigaction stop = { .sa_handler = on_stop };
	struct sigaction child = { .sa_handler = on_child, .sa_flags = SA_NOCLDSTOP | SA_RESTART };

	if (sigaction(SIGINT, &stop, NULL) < 0 || sigaction(SIGTERM, &stop, NULL) < 0 ||
	    sigaction(SIGCHLD, &child, NULL) < 0)
		return 1;
	for (;;)
		pause();
}
