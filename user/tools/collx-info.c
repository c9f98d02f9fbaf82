// SPDX-License-Identifier: (GPL-2.0 OR BSD-2-Clause)
/* collx-info: what the loaded collx module is and serves. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "collx.h"

static void usage(FILE *f)
{
	fprintf(f,
		"Usage: collx-info [options]\n"
		"Print the loaded collx module's version, ABI and RDMA device count.\n\n"
		"  -j, --json   one JSON object instead of text\n"
		"  -h, --help   this text\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{}
	};
	const struct collx_version *v;
	struct collx_dev *dev;
	int json = 0, c, err;

	while ((c = getopt_long(argc, argv, "jh", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}

	err = collx_dev_open(&dev);
	if (err) {
		fprintf(stderr, "collx-info: %s\n", collx_strerror(err));
		return 1;
	}
	v = collx_dev_version(dev);
	if (json)
		printf("{\"module_version\": \"%s\", \"abi_major\": %u, "
		       "\"abi_minor\": %u, \"nr_devices\": %u, "
		       "\"features\": %llu}\n",
		       v->module_version, v->abi_major, v->abi_minor,
		       v->nr_devices, (unsigned long long)v->features);
	else
		printf("module version: %s\nABI: %u.%u\nRDMA devices: %u\n"
		       "features: 0x%llx\n",
		       v->module_version, v->abi_major, v->abi_minor,
		       v->nr_devices, (unsigned long long)v->features);
	collx_dev_close(dev);
	return 0;
}
