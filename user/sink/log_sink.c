// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
// Copyright (c) 2026 cirron-probe authors
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>
#include "sink/log_sink.h"

#define LOG_SINK_IDENT "cirron-probe"
#define SEND_TIMEOUT_US 100000

static const struct timeval send_timeout = { .tv_usec = SEND_TIMEOUT_US };

static struct {
	int fd;
	struct sockaddr_un addr;
	uint64_t dropped;
} sink = { .fd = -1 };

static int reconnect(void)
{
	if (sink.fd >= 0)
		close(sink.fd);
	sink.fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (sink.fd < 0)
		return -errno;
	/* A daemon behind (its queue full: a burst of spans) gets a moment, not forever */
	setsockopt(sink.fd, SOL_SOCKET, SO_SNDTIMEO, &send_timeout, sizeof(send_timeout));
	if (connect(sink.fd, (struct sockaddr *)&sink.addr, sizeof(sink.addr))) {
		int err = -errno;

		close(sink.fd);
		sink.fd = -1;
		return err;
	}
	return 0;
}

int log_sink__open(const char *path)
{
	if (strlen(path) >= sizeof(sink.addr.sun_path))
		return -ENAMETOOLONG;
	sink.addr.sun_family = AF_UNIX;
	strcpy(sink.addr.sun_path, path);
	return reconnect();
}

void log_sink__span(const struct span *sp)
{
	char line[2048], msg[2200], when[32];
	time_t now = time(NULL);
	struct tm tm;
	int n;

	span__format_line(sp, line, sizeof(line));
	/* RFC 3164, as glibc's syslog(3) writes it: <PRI>Mmm dd hh:mm:ss TAG[PID]: MSG */
	strftime(when, sizeof(when), "%b %e %H:%M:%S", localtime_r(&now, &tm));
	n = snprintf(msg, sizeof(msg), "<%d>%s %s[%d]: %s", LOG_USER | LOG_INFO, when,
		     LOG_SINK_IDENT, (int)getpid(), line);
	if (n < 0)
		return;
	if (n >= (int)sizeof(msg))
		n = sizeof(msg) - 1;
	for (int tries = 0; tries < 2; tries++) {
		if (sink.fd >= 0 && send(sink.fd, msg, (size_t)n, MSG_NOSIGNAL) >= 0)
			return;
		/* the daemon restarted (a new socket at the path): connect again, once */
		if (sink.fd >= 0 && errno != ECONNREFUSED && errno != ENOTCONN && errno != ENOENT)
			break;
		if (reconnect())
			break;
	}
	sink.dropped++;
}

uint64_t log_sink__dropped(void)
{
	return sink.dropped;
}

void log_sink__close(void)
{
	if (sink.fd >= 0)
		close(sink.fd);
	sink.fd = -1;
}
