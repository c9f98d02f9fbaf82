// SPDX-License-Identifier: GPL-2.0
/*
 * The errno contract of COLLX_IOC_VERSION and of the ioctl dispatch
 * (include/uapi/linux/collx.h, "General ioctl format"): short, long,
 * dirty-tailed and unknown requests.  Runs inside a lab node.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>
#include <linux/collx.h>

static int failures;

#define CHECK(cond, ...)                                          \
	do {                                                      \
		if (!(cond)) {                                    \
			fprintf(stderr, "FAIL line %d: ", __LINE__); \
			fprintf(stderr, __VA_ARGS__);             \
			fputc('\n', stderr);                      \
			failures++;                               \
		}                                                 \
	} while (0)

/* ioctl() returning 0 or the errno. */
static int xioctl(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) ? errno : 0;
}

int main(void)
{
	const size_t min = offsetof(struct collx_version, __reserved) + 4;
	unsigned char big[4096];
	struct collx_version v;
	int fd, err;

	fd = open("/dev/collx", O_RDWR);
	if (fd < 0) {
		perror("open /dev/collx");
		return 1;
	}

	memset(&v, 0, sizeof(v));
	v.size = sizeof(v);
	err = xioctl(fd, COLLX_IOC_VERSION, &v);
	CHECK(err == 0, "full-size request: errno %d", err);
	CHECK(v.abi_major == COLLX_ABI_MAJOR, "abi_major %u", v.abi_major);
	CHECK(v.abi_minor == COLLX_ABI_MINOR, "abi_minor %u", v.abi_minor);
	CHECK(memchr(v.module_version, 0, sizeof(v.module_version)) &&
	      v.module_version[0], "module_version not a string");
	printf("version %s, ABI %u.%u, %u device(s)\n", v.module_version,
	       v.abi_major, v.abi_minor, v.nr_devices);

	/* One byte short of the mandatory part. */
	memset(&v, 0, sizeof(v));
	v.size = min - 1;
	err = xioctl(fd, COLLX_IOC_VERSION, &v);
	CHECK(err == EINVAL, "size %zu: errno %d, want EINVAL", min - 1, err);

	/* Just the mandatory part: answered, nothing written past it. */
	memset(big, 0xa5, sizeof(big));
	memset(big, 0, min);
	((struct collx_version *)big)->size = min;
	err = xioctl(fd, COLLX_IOC_VERSION, big);
	CHECK(err == 0, "size %zu: errno %d", min, err);
	CHECK(((struct collx_version *)big)->abi_major == COLLX_ABI_MAJOR,
	      "short struct: abi_major not written");
	CHECK(big[min] == 0xa5 && big[sizeof(v)] == 0xa5,
	      "kernel wrote past the user's size");

	/* A newer caller: longer struct, zero tail. */
	memset(big, 0, sizeof(big));
	((struct collx_version *)big)->size = sizeof(big);
	err = xioctl(fd, COLLX_IOC_VERSION, big);
	CHECK(err == 0, "size %zu, zero tail: errno %d", sizeof(big), err);

	/* A newer caller using a field this kernel does not know. */
	big[sizeof(big) - 1] = 1;
	err = xioctl(fd, COLLX_IOC_VERSION, big);
	CHECK(err == E2BIG, "non-zero tail: errno %d, want E2BIG", err);

	memset(&v, 0, sizeof(v));
	v.size = sizeof(v);
	v.flags = 1;
	err = xioctl(fd, COLLX_IOC_VERSION, &v);
	CHECK(err == EINVAL, "flags=1: errno %d, want EINVAL", err);

	memset(&v, 0, sizeof(v));
	v.size = sizeof(v);
	v.__reserved = 1;
	err = xioctl(fd, COLLX_IOC_VERSION, &v);
	CHECK(err == EINVAL, "__reserved=1: errno %d, want EINVAL", err);

	err = xioctl(fd, COLLX_IOC_VERSION, NULL);
	CHECK(err == EFAULT, "NULL argument: errno %d, want EFAULT", err);

	err = xioctl(fd, _IO(COLLX_TYPE, COLLX_CMD_BASE + 0x70), &v);
	CHECK(err == ENOTTY, "unknown command: errno %d, want ENOTTY", err);
	err = xioctl(fd, _IO('Y', COLLX_CMD_VERSION), &v);
	CHECK(err == ENOTTY, "foreign ioctl type: errno %d, want ENOTTY", err);
	err = xioctl(fd, _IOWR(COLLX_TYPE, COLLX_CMD_VERSION, struct collx_version), &v);
	CHECK(err == ENOTTY, "size-encoded number: errno %d, want ENOTTY", err);

	close(fd);
	if (failures)
		fprintf(stderr, "%d check(s) failed\n", failures);
	return failures ? 1 : 0;
}
