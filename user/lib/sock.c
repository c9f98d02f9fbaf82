// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/*
 * libcollx: TCP for the rendezvous: bounded I/O on non-blocking sockets,
 * listening, connecting, names and addresses.
 *
 *   COLLX_SOCKET_IFNAME=LIST   the interface the rendezvous uses (the
 *                              NCCL_SOCKET_IFNAME syntax: prefixes, '^'
 *                              to exclude, '=' for exact names); default:
 *                              any (rank 0 listens on every address)
 */
#include <arpa/inet.h>
#include <errno.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "collx_int.h"

int64_t collx_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int collx_sock_io(int fd, void *buf, size_t len, int64_t deadline, bool wr)
{
	char *p = buf;
	ssize_t n;

	while (len) {
		n = wr ? send(fd, p, len, MSG_NOSIGNAL) : recv(fd, p, len, 0);
		if (n > 0) {
			p += n;
			len -= n;
			continue;
		}
		if (n == 0)
			return -ECONNRESET;
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK) {
			struct pollfd pfd = { .fd = fd, .events = wr ? POLLOUT : POLLIN };
			int64_t rem = deadline - collx_now_ms();

			if (rem <= 0)
				return -ETIMEDOUT;
			if (poll(&pfd, 1, rem > 1000000 ? 1000000 : (int)rem) < 0 && errno != EINTR)
				return -errno;
			continue;
		}
		return -errno;
	}
	return 0;
}

int collx_sock_listen(struct sockaddr_in *sa)
{
	socklen_t len = sizeof(*sa);
	int fd, one = 1, err;

	fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)sa, sizeof(*sa)) ||
	    listen(fd, SOMAXCONN) ||
	    getsockname(fd, (struct sockaddr *)sa, &len)) {
		err = -errno;
		close(fd);
		return err;
	}
	return fd;
}

int collx_sock_connect(const struct sockaddr_in *dst, struct in_addr src,
		       int64_t deadline, int *fdp)
{
	struct pollfd pfd;
	socklen_t len = sizeof(int);
	int fd, err = 0, one = 1;
	int64_t rem;

	fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (src.s_addr != htonl(INADDR_ANY)) {
		struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr = src };

		if (bind(fd, (struct sockaddr *)&sa, sizeof(sa))) {
			err = -errno;
			goto out_close;
		}
	}
	if (connect(fd, (const struct sockaddr *)dst, sizeof(*dst)) == 0)
		goto out_ok;
	if (errno != EINPROGRESS) {
		err = -errno;
		goto out_close;
	}
	rem = deadline - collx_now_ms();
	if (rem > 2000)
		rem = 2000;
	pfd.fd = fd;
	pfd.events = POLLOUT;
	if (rem <= 0 || poll(&pfd, 1, (int)rem) <= 0) {
		err = -ETIMEDOUT;
		goto out_close;
	}
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) || err) {
		err = err ? -err : -errno;
		goto out_close;
	}
out_ok:
	*fdp = fd;
	return 0;
out_close:
	close(fd);
	return err;
}

int collx_resolve_ipv4(const char *host, struct in_addr *out)
{
	struct addrinfo hints = { .ai_family = AF_INET, .ai_socktype = SOCK_STREAM };
	struct addrinfo *ai;

	if (inet_pton(AF_INET, host, out) == 1)
		return 0;
	if (getaddrinfo(host, NULL, &hints, &ai))
		return -EHOSTUNREACH;
	*out = ((struct sockaddr_in *)ai->ai_addr)->sin_addr;
	freeaddrinfo(ai);
	return 0;
}

void collx_addr_str(const struct collx_rank_addr *a, char *out, size_t len)
{
	if (!inet_ntop(a->family == AF_INET6 ? AF_INET6 : AF_INET, a->addr, out, len))
		snprintf(out, len, "?");
}

void collx_host_name(char *out, size_t len)
{
	if (gethostname(out, len))
		snprintf(out, len, "?");
	out[len - 1] = 0;
}

/* First IPv4 address of an up interface that @keep accepts. */
static int find_ipv4(bool (*keep)(const struct ifaddrs *, const void *), const void *arg,
		     struct in_addr *out, char *ifname, size_t iflen)
{
	struct ifaddrs *ifa, *i;
	int err = -EADDRNOTAVAIL;

	if (getifaddrs(&ifa))
		return -errno;
	for (i = ifa; i; i = i->ifa_next) {
		if (!i->ifa_addr || i->ifa_addr->sa_family != AF_INET ||
		    !(i->ifa_flags & IFF_UP) || !keep(i, arg))
			continue;
		*out = ((struct sockaddr_in *)i->ifa_addr)->sin_addr;
		if (ifname)
			snprintf(ifname, iflen, "%s", i->ifa_name);
		err = 0;
		break;
	}
	freeifaddrs(ifa);
	return err;
}

static bool not_loopback(const struct ifaddrs *i, const void *arg)
{
	(void)arg;
	return !(i->ifa_flags & IFF_LOOPBACK);
}

int collx_first_ipv4(struct in_addr *out)
{
	return find_ipv4(not_loopback, NULL, out, NULL, 0);
}

static bool in_list(const struct ifaddrs *i, const void *arg)
{
	return collx_nlist_match(arg, i->ifa_name, 0);
}

int collx_sock_ifaddr(const struct collx_nlist *l, struct in_addr *out,
		      char *ifname, size_t iflen, char *err, size_t errlen)
{
	if (find_ipv4(in_list, l, out, ifname, iflen)) {
		snprintf(err, errlen, "COLLX_SOCKET_IFNAME matches no interface that is up with an IPv4 address");
		return -ENODEV;
	}
	return 0;
}

int collx_sock_bind_addr(struct in_addr *out, char *err, size_t errlen)
{
	const char *spec = collx_getenv("COLLX_SOCKET_IFNAME");
	struct collx_nlist l;
	char ifname[IF_NAMESIZE], ip[INET_ADDRSTRLEN];
	int rc;

	out->s_addr = htonl(INADDR_ANY);
	if (!spec || !*spec)
		return 0;
	if (collx_nlist_parse(spec, false, &l)) {
		snprintf(err, errlen, "COLLX_SOCKET_IFNAME=%s is not a list of interface names (NCCL_SOCKET_IFNAME syntax)",
			 spec);
		return -EINVAL;
	}
	rc = collx_sock_ifaddr(&l, out, ifname, sizeof(ifname), err, errlen);
	if (rc)
		snprintf(err, errlen, "COLLX_SOCKET_IFNAME=%s matches no interface that is up with an IPv4 address",
			 spec);
	else
		INFO(COLLX_SUB_BOOTSTRAP, -1, "bootstrap: interface %s, %s (COLLX_SOCKET_IFNAME=%s)",
		     ifname, inet_ntop(AF_INET, out, ip, sizeof(ip)), spec);
	return rc;
}
