/* SPDX-License-Identifier: MIT */
/* test_parse_netdev.c - vms_netdev_header() and vms_netdev_next().
 *
 * Expected values: node_exporter's and procfs's readings of the same files
 * (../shared/fixtures/proc/EXPECTED.md), facts from
 * tests/fixtures/PROVENANCE.md, and an independent reader (strrchr +
 * strtoull) for every line of every fixture. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testutil.h"

#include "parse.h"

#define load(name, len) fixture_exact(name, "net/dev", len)

#define MAXIF 64

struct net_file {
	struct vms_netdev_hdr hdr;
	unsigned n, errors;
	char name[MAXIF][64];
	uint64_t v[MAXIF][VMS_NET_FIELDS];
};

static void parse_buf(const char *buf, size_t len, struct net_file *nf)
{
	struct vms_cur c;
	struct vms_net_line nl;
	int r;

	memset(nf, 0, sizeof(*nf));
	vms_cur_init(&c, buf, len);
	assert_int_equal(vms_netdev_header(&c, &nf->hdr), 0);
	while ((r = vms_netdev_next(&c, &nf->hdr, &nl)) != 0) {
		if (r < 0) {
			assert_true(r == -EINVAL || r == -ERANGE);
			nf->errors++;
			continue;
		}
		assert_int_equal(r, 1);
		assert_true(nf->n < MAXIF && nl.name_len < 64);
		memcpy(nf->name[nf->n], nl.name, nl.name_len);
		nf->name[nf->n][nl.name_len] = '\0';
		memcpy(nf->v[nf->n], nl.v, sizeof(nl.v));
		nf->n++;
	}
}

static void parse_fixture(const char *name, struct net_file *nf)
{
	size_t len;
	char *buf = load(name, &len);
	parse_buf(buf, len, nf);
	free(buf);
}

static const uint64_t *iface(const struct net_file *nf, const char *name)
{
	for (unsigned i = 0; i < nf->n; i++)
		if (strcmp(nf->name[i], name) == 0)
			return nf->v[i];
	fail_msg("interface %s not parsed", name);
	return NULL;
}

enum { RXB, RXP, RXERR, RXDROP, RXFIFO, RXFRAME, RXCOMP, RXMCAST,
       TXB, TXP, TXERR, TXDROP, TXFIFO, TXCOLLS, TXCARRIER, TXCOMP };

/* ---- node_exporter ----------------------------------------------------------- */

static const struct {
	const char *name;
	uint64_t rx_bytes, rx_packets, tx_bytes;
} odd_names[] = {
	/* receive_bytes, receive_packets, transmit_bytes (EXPECTED.md section 2) */
	{"docker0", 64910168, 1065585, 2681662018},
	{"eth0", 68210035552, 520993275, 9315587528},
	{"flannel.1", 18144009813, 228499337, 20758990068},
	{"ibr10:30", 0, 0, 0},
	{"lo", 435303245, 1832522, 435303245},
	{"lxcbr0", 0, 0, 2630299},
	{"tun0", 1888, 24, 67120},
	{"veth4B09XN", 648, 8, 1943284},
	{"wlan0", 10437182923, 13899359, 2851649360},
	{"\xf0\x9f\x92\xa9" "0", 57750104, 105557, 404570255}, /* U+1F4A9 then '0' */
};

static void test_node_exporter_odd_names(void **state)
{
	(void)state;
	struct net_file *nf = malloc(sizeof(*nf));
	parse_fixture("node_exporter-odd-names", nf);
	assert_int_equal(nf->errors, 0);
	/* exactly 10 devices */
	assert_int_equal(nf->n, 10);
	for (unsigned i = 0; i < VMS_ARRAY_SIZE(odd_names); i++) {
		const uint64_t *v = iface(nf, odd_names[i].name);
		assert_int_equal(v[RXB], odd_names[i].rx_bytes);
		assert_int_equal(v[RXP], odd_names[i].rx_packets);
		assert_int_equal(v[TXB], odd_names[i].tx_bytes);
		/* receive_multicast: 💩0 72 (all others 0); transmit_drop: flannel.1 64 */
		assert_int_equal(v[RXMCAST], i == 9 ? 72 : 0);
		assert_int_equal(v[TXDROP], strcmp(odd_names[i].name, "flannel.1") == 0 ? 64 : 0);
	}
	/* transmit_packets (non-zero): eth0 43451486, flannel.1 258369223, 💩0 304261 */
	assert_int_equal(iface(nf, "eth0")[TXP], 43451486);
	assert_int_equal(iface(nf, "flannel.1")[TXP], 258369223);
	assert_int_equal(iface(nf, "\xf0\x9f\x92\xa9" "0")[TXP], 304261);
	free(nf);
}

/* ---- prometheus/procfs ------------------------------------------------------- */

static void test_procfs(void **state)
{
	(void)state;
	struct net_file *nf = malloc(sizeof(*nf));
	static const struct {
		const char *name;
		uint64_t rxb, rxp, txb, txp;
	} veth[] = {
		/* TestNetDev: exactly 4 interfaces */
		{"vethf345468", 648, 8, 438, 5},
		{"lo", 1664039048, 1566805, 1664039048, 1566805},
		{"docker0", 2568, 38, 438, 5},
		{"eth0", 874354587, 1036395, 563352563, 732147},
	};
	parse_fixture("procfs-docker-veth", nf);
	assert_int_equal(nf->errors, 0);
	assert_int_equal(nf->n, 4);
	for (unsigned i = 0; i < 4; i++) {
		assert_string_equal(nf->name[i], veth[i].name); /* in file order */
		const uint64_t *v = nf->v[i];
		assert_int_equal(v[RXB], veth[i].rxb);
		assert_int_equal(v[RXP], veth[i].rxp);
		assert_int_equal(v[TXB], veth[i].txb);
		assert_int_equal(v[TXP], veth[i].txp);
	}
	/* vethf345468: "all other fields 0" */
	for (unsigned f = 0; f < VMS_NET_FIELDS; f++)
		if (f != RXB && f != RXP && f != TXB && f != TXP)
			assert_int_equal(nf->v[0][f], 0);

	/* TestProcNetDev: exactly 2 interfaces; lo all 16 counters 0; eth0 RxBytes
	 * 438 RxPackets 5 TxBytes 648 TxPackets 8 */
	parse_fixture("procfs-pid26231-netns", nf);
	assert_int_equal(nf->n, 2);
	for (unsigned f = 0; f < VMS_NET_FIELDS; f++)
		assert_int_equal(iface(nf, "lo")[f], 0);
	assert_int_equal(iface(nf, "eth0")[RXB], 438);
	assert_int_equal(iface(nf, "eth0")[RXP], 5);
	assert_int_equal(iface(nf, "eth0")[TXB], 648);
	assert_int_equal(iface(nf, "eth0")[TXP], 8);
	free(nf);
}

static void test_alias_line(void **state)
{
	(void)state;
	/* TestNetDevParseLine: "  eth0:1: 1 2 ... 16" yields name "eth0:1" */
	const char *s = "Inter-|   Receive                                                |  Transmit\n"
			" face |bytes    packets errs drop fifo frame compressed multicast|"
			"bytes    packets errs drop fifo colls carrier compressed\n"
			"  eth0:1: 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16\n";
	struct vms_cur c;
	struct vms_netdev_hdr h;
	struct vms_net_line nl;
	vms_cur_init(&c, s, strlen(s));
	assert_int_equal(vms_netdev_header(&c, &h), 0);
	assert_int_equal(vms_netdev_next(&c, &h, &nl), 1);
	assert_int_equal(nl.name_len, 6);
	assert_memory_equal(nl.name, "eth0:1", 6);
	for (unsigned f = 0; f < VMS_NET_FIELDS; f++)
		assert_int_equal(nl.v[f], f + 1);
	assert_int_equal(vms_netdev_next(&c, &h, &nl), 0);
}

/* ---- glued numbers, big counters, odd layouts ------------------------------- */

static void test_glued_and_big(void **state)
{
	(void)state;
	struct net_file *nf = malloc(sizeof(*nf));
	/* "rx bytes GLUED to colon ('lo:480134461', 'eth0:23443246382'); eth0 rx
	 * 23443246382 > 2^32" */
	parse_fixture("goprocinfo-squeeze-glued", nf);
	assert_int_equal(nf->errors, 0);
	assert_int_equal(nf->n, 2);
	assert_int_equal(iface(nf, "lo")[RXB], 480134461);
	assert_int_equal(iface(nf, "eth0")[RXB], 23443246382ull);
	/* "'lo:181033261002' and 'eth0:68210035552' glued to colon" */
	parse_fixture("node_exporter-issue73-glued", nf);
	assert_int_equal(nf->errors, 0);
	assert_int_equal(iface(nf, "lo")[RXB], 181033261002ull);
	assert_int_equal(iface(nf, "eth0")[RXB], 68210035552ull);
	/* "lo (141078250858 bytes > 2^37), eth0 tx 9368243963 > 2^33; lo NOT first" */
	parse_fixture("atlas-ec2-lo-over-2e37-t0", nf);
	assert_int_equal(nf->n, 3);
	assert_string_equal(nf->name[1], "lo");
	assert_int_equal(iface(nf, "lo")[RXB], 141078250858ull);
	assert_int_equal(iface(nf, "eth0")[TXB], 9368243963ull);
	/* "errs/drop/colls/carrier now non-zero" */
	parse_fixture("atlas-ec2-t1-errors", nf);
	assert_true(iface(nf, "eth0")[TXCOLLS] > 0 && iface(nf, "eth0")[TXCARRIER] > 0);
	assert_true(iface(nf, "eth1")[RXERR] > 0);
	/* "'ip6tnl0:' has no leading space"; "lo 2659736102"; 8 ifaces */
	parse_fixture("goprocinfo-pid3323-tunnels", nf);
	assert_int_equal(nf->errors, 0);
	assert_int_equal(nf->n, 8);
	assert_string_equal(nf->name[7], "ip6tnl0");
	assert_int_equal(iface(nf, "lo")[RXB], 2659736102u);
	/* 26 ifaces; "apcli0 rx drop = 3235057664"; "'ip6tnl0:' fills name column" */
	parse_fixture("zte-modem-26if-drop-near-2e32", nf);
	assert_int_equal(nf->errors, 0);
	assert_int_equal(nf->n, 26);
	assert_int_equal(iface(nf, "apcli0")[RXDROP], 3235057664u);
	(void)iface(nf, "ip6tnl0");
	/* 49 ifaces: lo + eth0..eth47 */
	parse_fixture("pcp-bigsys-hpbl920-49if", nf);
	assert_int_equal(nf->n, 49);
	(void)iface(nf, "eth47");
	/* "virbr0-nic, virbr0-1 (dash in names)", 6 ifaces */
	parse_fixture("sysstat-root1-virbr", nf);
	assert_int_equal(nf->n, 6);
	(void)iface(nf, "virbr0-nic");
	(void)iface(nf, "virbr0-1");
	free(nf);
}

static void test_no_trailing_newline(void **state)
{
	(void)state;
	struct net_file *nf = malloc(sizeof(*nf));
	/* "em1/em2 + lo; NO TRAILING NEWLINE after last line" */
	size_t len;
	char *buf = load("jtsys-em1-em2-nonl", &len);
	assert_true(buf[len - 1] != '\n');
	parse_buf(buf, len, nf);
	assert_int_equal(nf->errors, 0);
	assert_int_equal(nf->n, 3);
	assert_string_equal(nf->name[2], "em2");
	for (unsigned f = 0; f < VMS_NET_FIELDS; f++)
		assert_int_equal(nf->v[2][f], 0); /* "em2:       0       0 ... 0" */
	free(buf);
	free(nf);
}

/* ---- every line of every fixture against an independent reader ------------ */


static void test_all_fixtures_reference(void **state)
{
	(void)state;
	unsigned total = 0;
	for (unsigned k = 0; k < NET_FIXTURES_N; k++) {
		size_t len;
		char *buf = load(net_fixtures[k], &len);
		char *copy = strndup(buf, len);
		char *save = NULL;
		struct vms_cur c;
		struct vms_netdev_hdr h;
		struct vms_net_line nl;
		vms_cur_init(&c, buf, len);
		assert_int_equal(vms_netdev_header(&c, &h), 0);
		/* every fixture has the standard header: column i is our field i */
		assert_int_equal(h.ncols, 16);
		for (unsigned i = 0; i < 16; i++)
			assert_int_equal(h.map[i], (int)i);
		unsigned lineno = 0;
		for (char *ln = strtok_r(copy, "\n", &save); ln; ln = strtok_r(NULL, "\n", &save)) {
			if (lineno++ < 2)
				continue;
			char *colon = strrchr(ln, ':');
			assert_non_null(colon);
			*colon = '\0';
			const char *name = ln + strspn(ln, " ");
			assert_int_equal(vms_netdev_next(&c, &h, &nl), 1);
			assert_int_equal(nl.name_len, strlen(name));
			assert_memory_equal(nl.name, name, nl.name_len);
			char *p = colon + 1, *end;
			for (unsigned f = 0; f < 16; f++) {
				assert_int_equal(nl.v[f], strtoull(p, &end, 10));
				assert_true(end > p);
				p = end;
			}
			total++;
		}
		assert_int_equal(vms_netdev_next(&c, &h, &nl), 0);
		free(copy);
		free(buf);
	}
	assert_int_equal(total, 3 + 3 + 8 + 2 + 3 + 4 + 10 + 49 + 4 + 2 + 6 + 26);
}

/* ---- headers ------------------------------------------------------------------- */

#define L1 "Inter-|   Receive                                                |  Transmit\n"

static int hdr(const char *s, struct vms_netdev_hdr *h)
{
	struct vms_cur c;
	vms_cur_init(&c, s, strlen(s));
	return vms_netdev_header(&c, h);
}

static void test_headers(void **state)
{
	(void)state;
	struct vms_netdev_hdr h;
	struct vms_cur c;
	struct vms_net_line nl;

	/* columns in another order, one we do not know, two missing (rx_fifo,
	 * tx_compressed): mapped by name; missing fields are VMS_NONE */
	const char *s = L1 " face |packets bytes errs drop frame compressed multicast wibble"
			  "|bytes packets errs drop fifo colls carrier\n"
			  "  eth9: 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15\n";
	vms_cur_init(&c, s, strlen(s));
	assert_int_equal(vms_netdev_header(&c, &h), 0);
	assert_int_equal(h.ncols, 15);
	assert_int_equal(h.map[0], RXP);
	assert_int_equal(h.map[1], RXB);
	assert_int_equal(h.map[7], -1);
	assert_int_equal(vms_netdev_next(&c, &h, &nl), 1);
	assert_int_equal(nl.v[RXP], 1);
	assert_int_equal(nl.v[RXB], 2);
	assert_int_equal(nl.v[RXERR], 3);
	assert_int_equal(nl.v[RXDROP], 4);
	assert_true(nl.v[RXFIFO] == VMS_NONE);
	assert_int_equal(nl.v[RXFRAME], 5);
	assert_int_equal(nl.v[RXMCAST], 7);
	assert_int_equal(nl.v[TXB], 9);
	assert_int_equal(nl.v[TXCARRIER], 15);
	assert_true(nl.v[TXCOMP] == VMS_NONE);

	/* broken headers */
	assert_int_equal(hdr("", &h), -EINVAL);
	assert_int_equal(hdr(L1, &h), -EINVAL);                       /* one line */
	assert_int_equal(hdr("    lo: 1 2\n  eth0: 3 4\n", &h), -EINVAL); /* no header */
	assert_int_equal(hdr(L1 " face bytes packets\n", &h), -EINVAL);
	assert_int_equal(hdr(L1 " face |bytes packets\n", &h), -EINVAL);
	assert_int_equal(hdr(L1 " face |bytes|bytes|bytes\n", &h), -EINVAL);
	assert_int_equal(hdr(L1 " face |bytes bytes|packets\n", &h), -EINVAL); /* twice */
	assert_int_equal(hdr(L1 " face ||\n", &h), -EINVAL);                   /* no column */
	assert_int_equal(hdr(L1 " face |a b c d e f g h i j k l m n o p|a b c d e f g h i j k l m n o p q\n", &h),
			 -EINVAL); /* 33 columns */
	assert_int_equal(hdr(L1 " face |a b c d e f g h i j k l m n o p|a b c d e f g h i j k l m n o p\n", &h),
			 0);
	assert_int_equal(h.ncols, 32);
}

/* ---- damaged lines ---------------------------------------------------------- */

static void test_malformed(void **state)
{
	(void)state;
	static const struct {
		const char *line;
		int err;
	} bad[] = {
		{"  eth0 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16", -EINVAL},  /* no ':' */
		{"  : 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16", -EINVAL},     /* no name */
		{"  et h0: 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16", -EINVAL},
		{"  eth0: 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15", -EINVAL},    /* 15 */
		{"  eth0: 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17", -EINVAL},
		{"  eth0: 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 x", -EINVAL},
		{"  eth0: 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16x", -EINVAL},
		{"  eth0: 1 2 3 4 5 6 7 8 9:10 11 12 13 14 15 16", -EINVAL}, /* ':' among numbers */
		{"  eth0:", -EINVAL},
		{"", -EINVAL},
		{"  eth0: 18446744073709551616 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16", -ERANGE},
		{"  et@h0: 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16", -EINVAL}, /* '@' -> NUL */
	};
	char buf[512];
	struct vms_netdev_hdr h;
	assert_int_equal(hdr(L1 " face |bytes    packets errs drop fifo frame compressed multicast|"
			     "bytes    packets errs drop fifo colls carrier compressed\n", &h), 0);
	for (unsigned i = 0; i < VMS_ARRAY_SIZE(bad); i++) {
		int n = snprintf(buf, sizeof(buf),
				 "    lo: 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16\n%s\n"
				 "   em1:18446744073709551615 0 0 0 0 0 0 0 0 0 0 0 0 0 0 7",
				 bad[i].line);
		char *at = strchr(buf, '@');
		if (at)
			*at = '\0';
		struct vms_cur c;
		struct vms_net_line nl;
		vms_cur_init(&c, buf, (size_t)n);
		assert_int_equal(vms_netdev_next(&c, &h, &nl), 1);
		assert_int_equal(nl.v[TXCOMP], 16);
		int r = vms_netdev_next(&c, &h, &nl);
		if (r != bad[i].err)
			fail_msg("\"%s\": got %d, want %d", bad[i].line, r, bad[i].err);
		assert_int_equal(vms_netdev_next(&c, &h, &nl), 1);
		assert_memory_equal(nl.name, "em1", 3);
		assert_true(nl.v[RXB] == UINT64_MAX);
		assert_int_equal(nl.v[TXCOMP], 7);
		assert_int_equal(vms_netdev_next(&c, &h, &nl), 0);
	}
	/* a header that was never parsed */
	struct vms_netdev_hdr zero = {.ncols = 0};
	struct vms_cur c;
	struct vms_net_line nl;
	vms_cur_init(&c, "lo: 1\n", 6);
	assert_int_equal(vms_netdev_next(&c, &zero, &nl), -EINVAL);
}

static void test_truncated(void **state)
{
	(void)state;
	size_t len;
	char *full = load("node_exporter-odd-names", &len);
	for (size_t cut = 0; cut <= len; cut++) {
		char *buf = malloc(cut ? cut : 1);
		memcpy(buf, full, cut);
		struct vms_cur c;
		struct vms_netdev_hdr h;
		struct vms_net_line nl;
		unsigned errors = 0;
		int r;
		vms_cur_init(&c, buf, cut);
		if (vms_netdev_header(&c, &h) == 0) {
			while ((r = vms_netdev_next(&c, &h, &nl)) != 0)
				if (r < 0)
					errors++;
		}
		assert_true(errors <= 1);
		free(buf);
	}
	free(full);
}

VMS_TEST_MAIN(NULL, NULL,
	test_node_exporter_odd_names, test_procfs, test_alias_line, test_glued_and_big,
	test_no_trailing_newline, test_all_fixtures_reference, test_headers, test_malformed,
	test_truncated)
