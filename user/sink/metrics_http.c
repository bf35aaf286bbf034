// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
//
// The --metrics HTTP/1.1 server (metrics.h): a non-blocking listening socket and up to
// METRICS_MAX_CONNS connections, each read until its request's headers end, answered with
// the rendered page (GET or HEAD /metrics; 404 and 405 otherwise), then closed.
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include "sink/metrics_internal.h"

int metrics__parse_addr(const char *arg, uint32_t *ip_be, uint16_t *port)
{
	const char *colon = strrchr(arg, ':'), *port_str = colon ? colon + 1 : arg;
	char addr[INET_ADDRSTRLEN] = "127.0.0.1", *end;	/* PORT and :PORT: loopback only */
	struct in_addr in;
	unsigned long p;

	if (colon && colon != arg) {
		if ((size_t)(colon - arg) >= sizeof(addr))
			return -EINVAL;
		memcpy(addr, arg, (size_t)(colon - arg));
		addr[colon - arg] = 0;
	}
	if (inet_pton(AF_INET, addr, &in) != 1)
		return -EINVAL;
	errno = 0;
	p = strtoul(port_str, &end, 10);
	if (errno || !*port_str || *end || p > 65535 || *port_str < '0' || *port_str > '9')
		return -EINVAL;
	*ip_be = in.s_addr;
	*port = (uint16_t)p;
	return 0;
}

struct metrics *metrics__listen(uint32_t ip_be, uint16_t port, double grace_s, int *err)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(port),
				  .sin_addr.s_addr = ip_be };
	socklen_t len = sizeof(sa);
	struct metrics *m = calloc(1, sizeof(*m));
	int one = 1;

	if (!m) {
		*err = -ENOMEM;
		return NULL;
	}
	m->fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (m->fd < 0 || setsockopt(m->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(m->fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(m->fd, 16) ||
	    getsockname(m->fd, (struct sockaddr *)&sa, &len)) {
		*err = -errno;
		if (m->fd >= 0)
			close(m->fd);
		free(m);
		return NULL;
	}
	m->port = ntohs(sa.sin_port);
	m->grace_ns = (uint64_t)(grace_s * 1e9);
	for (int i = 0; i < METRICS_MAX_CONNS; i++)
		m->conns[i].fd = -1;
	return m;
}

uint16_t metrics__port(const struct metrics *m)
{
	return m->port;
}

static void conn_close(struct conn *c)
{
	close(c->fd);
	free(c->out);
	c->fd = -1;
	c->out = NULL;
	c->nin = c->nout = c->off = 0;
}

static void respond(struct metrics *m, struct conn *c)
{
	char method[8] = "", target[64] = "";
	const char *status = "200 OK", *type = "text/plain; version=0.0.4; charset=utf-8";
	char *body = NULL, *head = NULL;
	size_t blen = 0;
	bool head_only;
	int hlen;

	c->in[c->nin < sizeof(c->in) ? c->nin : sizeof(c->in) - 1] = 0;
	sscanf(c->in, "%7s %63s", method, target);
	head_only = !strcmp(method, "HEAD");
	if (strcmp(method, "GET") != 0 && !head_only) {
		status = "405 Method Not Allowed";
	} else if (strcmp(target, "/metrics") != 0 && strncmp(target, "/metrics?", 9) != 0) {
		status = "404 Not Found";
	} else {
		m->scrapes++;
		body = metrics__render(m, &blen);
		if (!body)
			status = "500 Internal Server Error";
	}
	if (strncmp(status, "200", 3) != 0) {
		free(body);
		type = "text/plain; charset=utf-8";
		if (asprintf(&body, "%s\n", status) < 0)
			body = NULL;
		blen = body ? strlen(body) : 0;
	}
	hlen = asprintf(&head, "HTTP/1.1 %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
			"Connection: close\r\n\r\n", status, type, blen);
	if (hlen < 0) {
		free(body);
		conn_close(c);
		return;
	}
	c->out = malloc((size_t)hlen + (head_only ? 0 : blen) + 1);
	if (c->out) {
		memcpy(c->out, head, (size_t)hlen);
		if (!head_only && body)
			memcpy(c->out + hlen, body, blen);
		c->nout = (size_t)hlen + (head_only ? 0 : blen);
	}
	free(head);
	free(body);
	if (!c->out)
		conn_close(c);
}

static void conn_step(struct metrics *m, struct conn *c, uint64_t now_ns)
{
	ssize_t n;

	if (now_ns - c->since_ns > (uint64_t)METRICS_CONN_TIMEOUT_S * 1000000000u) {
		conn_close(c);
		return;
	}
	while (!c->out) {
		n = read(c->fd, c->in + c->nin, sizeof(c->in) - 1 - c->nin);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n <= 0) {
			conn_close(c);
			return;
		}
		c->nin += (size_t)n;
		c->in[c->nin] = 0;
		if (strstr(c->in, "\r\n\r\n") || strstr(c->in, "\n\n") ||
		    c->nin == sizeof(c->in) - 1)
			respond(m, c);
		if (c->fd < 0)
			return;
	}
	while (c->off < c->nout) {
		n = send(c->fd, c->out + c->off, c->nout - c->off, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n <= 0)
			break;
		c->off += (size_t)n;
	}
	shutdown(c->fd, SHUT_WR);
	conn_close(c);
}

void metrics__serve(struct metrics *m, uint64_t now_ns)
{
	int fd;

	if (!m)
		return;
	while ((fd = accept4(m->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC)) >= 0) {
		struct conn *c = NULL;

		for (int i = 0; i < METRICS_MAX_CONNS && !c; i++)
			if (m->conns[i].fd < 0)
				c = &m->conns[i];
		if (!c) {
			close(fd);	/* busy: the scraper retries */
			continue;
		}
		c->fd = fd;
		c->since_ns = now_ns;
	}
	for (int i = 0; i < METRICS_MAX_CONNS; i++)
		if (m->conns[i].fd >= 0)
			conn_step(m, &m->conns[i], now_ns);
	metrics__drop_ended(m, now_ns);
}

void metrics__free(struct metrics *m)
{
	if (!m)
		return;
	for (int i = 0; i < METRICS_MAX_CONNS; i++)
		if (m->conns[i].fd >= 0)
			conn_close(&m->conns[i]);
	metrics__free_series(m);
	close(m->fd);
	free(m);
}
