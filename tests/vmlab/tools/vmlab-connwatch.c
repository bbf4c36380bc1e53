/*
 * vmlab-connwatch - a long-lived libvirt client, as the sampler will be: one
 * connection, virConnectGetAllDomainStats every INTERVAL ms, and what happens when
 * libvirtd goes away and comes back.
 *
 *   vmlab-connwatch [-c URI] [-i MS] [-t SECONDS] [-k]
 *     -i MS       poll interval (default 200)
 *     -t SECONDS  run time (default 60)
 *     -k          enable keepalive (virConnectSetKeepAlive 2 s x 3)
 *
 * Prints one line per change of state (time since start in ms): each error with its
 * libvirt error code/domain/message, the close-callback reason, each reconnect and
 * how long the outage lasted, and the domain names seen after reconnecting.
 * A default event loop runs in a thread so that close callbacks and keepalive work.
 *
 * Build: gcc -O2 -pthread -o vmlab-connwatch vmlab-connwatch.c $(pkg-config --cflags --libs libvirt)
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <libvirt/libvirt.h>
#include <libvirt/virterror.h>

static double t_start;

static double now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static void *event_loop(void *arg)
{
	(void)arg;
	for (;;)
		virEventRunDefaultImpl();
	return NULL;
}

static void on_close(virConnectPtr conn, int reason, void *opaque)
{
	static const char *why[] = { "ERROR", "EOF", "KEEPALIVE", "CLIENT" };
	(void)conn;
	(void)opaque;
	printf("%8.0f ms  close callback: reason=%s\n", now_ms() - t_start,
	       reason >= 0 && reason < 4 ? why[reason] : "?");
}

/* swallow libvirt's default error printing; we print errors ourselves */
static void quiet(void *u, virErrorPtr e)
{
	(void)u;
	(void)e;
}

static virConnectPtr open_conn(const char *uri, int keepalive)
{
	virConnectPtr c = virConnectOpen(uri);
	if (!c)
		return NULL;
	virConnectRegisterCloseCallback(c, on_close, NULL, NULL);
	if (keepalive && virConnectSetKeepAlive(c, 2, 3) < 0)
		printf("keepalive not supported\n");
	return c;
}

int main(int argc, char **argv)
{
	const char *uri = "qemu:///system";
	int interval = 200, duration = 60, keepalive = 0, opt;
	unsigned int stats = VIR_DOMAIN_STATS_STATE | VIR_DOMAIN_STATS_CPU_TOTAL | VIR_DOMAIN_STATS_INTERFACE;
	virConnectPtr conn;
	pthread_t th;
	char last[512] = "";
	double down_since = -1;
	long calls = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	while ((opt = getopt(argc, argv, "c:i:t:k")) != -1) {
		switch (opt) {
		case 'c': uri = optarg; break;
		case 'i': interval = atoi(optarg); break;
		case 't': duration = atoi(optarg); break;
		case 'k': keepalive = 1; break;
		default: fprintf(stderr, "usage: vmlab-connwatch [-c URI] [-i MS] [-t S] [-k]\n"); return 2;
		}
	}
	virSetErrorFunc(NULL, quiet);
	if (virEventRegisterDefaultImpl() < 0)
		return 1;
	pthread_create(&th, NULL, event_loop, NULL);
	t_start = now_ms();
	if (!(conn = open_conn(uri, keepalive))) {
		fprintf(stderr, "cannot connect to %s\n", uri);
		return 1;
	}
	printf("%8.0f ms  connected to %s, polling every %d ms for %d s (keepalive %s)\n",
	       now_ms() - t_start, uri, interval, duration, keepalive ? "on" : "off");
	while (now_ms() - t_start < duration * 1000.0) {
		char line[512];
		if (!conn) {
			if ((conn = open_conn(uri, keepalive))) {
				printf("%8.0f ms  reconnected; outage %.0f ms\n", now_ms() - t_start,
				       now_ms() - down_since);
				down_since = -1;
				last[0] = 0;
			} else {
				virErrorPtr e = virGetLastError();
				snprintf(line, sizeof(line), "reconnect failed: code=%d domain=%d: %s",
					 e ? e->code : -1, e ? e->domain : -1, e ? e->message : "?");
				if (strcmp(line, last)) {
					printf("%8.0f ms  %s\n", now_ms() - t_start, line);
					snprintf(last, sizeof(last), "%s", line);
				}
			}
		}
		if (conn) {
			virDomainStatsRecordPtr *rec = NULL;
			double a = now_ms();
			int n = virConnectGetAllDomainStats(conn, stats, &rec, 0), i;
			double took = now_ms() - a;
			calls++;
			if (n >= 0) {
				int len = snprintf(line, sizeof(line), "ok: %d domains:", n);
				for (i = 0; i < n && len < (int)sizeof(line) - 40; i++)
					len += snprintf(line + len, sizeof(line) - len, " %s", virDomainGetName(rec[i]->dom));
				virDomainStatsRecordListFree(rec);
				if (strcmp(line, last)) {
					printf("%8.0f ms  %s (call %.1f ms)\n", now_ms() - t_start, line, took);
					snprintf(last, sizeof(last), "%s", line);
				}
			} else {
				virErrorPtr e = virGetLastError();
				snprintf(line, sizeof(line), "stats call failed after %.0f ms: code=%d domain=%d: %s; "
					 "virConnectIsAlive=%d", took, e ? e->code : -1, e ? e->domain : -1,
					 e ? e->message : "?", virConnectIsAlive(conn));
				printf("%8.0f ms  %s\n", now_ms() - t_start, line);
				snprintf(last, sizeof(last), "%s", line);
				if (virConnectIsAlive(conn) != 1) {
					virConnectClose(conn);
					conn = NULL;
					down_since = now_ms();
				}
			}
		}
		usleep(interval * 1000);
	}
	printf("%8.0f ms  done after %ld stats calls\n", now_ms() - t_start, calls);
	if (conn)
		virConnectClose(conn);
	return 0;
}
