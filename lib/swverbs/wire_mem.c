/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * In-memory wires.
 *
 * loop: a frame sent is received by the same device.
 * pair:<cable>: two devices joined by a named cable. A frame sent by one end
 * is received by the other, synchronously, on the sender's engine (both
 * ends must be served by one engine: pair_peer() lets swverbs refuse
 * others, so this never crosses threads). The link is up while both ends
 * exist and neither is unplugged (swv_set_port_link()): an unplugged end
 * takes the link down on both sides, as pulling a cable does.
 *
 * Both push frames from tx(), or a burst of them from tx_burst(), which the
 * receiving device steers together; rx_burst() has nothing to poll.
 *
 * A pair cable is the process's own: its name is registered machine-wide
 * (an abstract unix socket, dropped by the kernel when the process ends, a
 * crash included) only so that a second process naming it is warned that
 * it got a cable of its own (shm:<cable> is the cable between processes).
 */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "swv_priv.h"

#define SWV_MEM_SPEED 100000	/* Mbit/s */
#define SWV_MEM_MIN_FRAME 14	/* an Ethernet header: shorter is a runt */

static void
mem_tx_flush(struct swv_wire *wire)
{
	(void)wire;
}

static unsigned int
mem_rx_burst(struct swv_wire *wire, unsigned int budget)
{
	(void)wire;
	(void)budget;
	return 0;
}

static uint32_t
mem_speed(struct swv_wire *wire)
{
	(void)wire;
	return SWV_MEM_SPEED;
}

static int
mem_rx_fd(struct swv_wire *wire)
{
	(void)wire;
	return -1;
}

/*
 * loop
 */
static bool loop_link_up(struct swv_wire *wire);

static int
loop_tx(struct swv_wire *wire, const struct iovec *iov, int iovcnt,
	uint32_t len)
{
	if (SWV_LIKELY(loop_link_up(wire)))
		swv_device_rx(wire->dev, iov, iovcnt, len);
	else
		swv_wire_tx_link_down(wire, len);
	return 0;
}

static void
loop_tx_burst(struct swv_wire *wire, const struct swv_frame *fr,
	      unsigned int n)
{
	unsigned int i;

	if (SWV_LIKELY(loop_link_up(wire))) {
		swv_device_rx_burst(wire->dev, fr, n);
		return;
	}
	for (i = 0; i < n; i++)
		swv_wire_tx_link_down(wire, fr[i].len);
}

/* A loop wire and its unplugged flag (swv_set_port_link()). */
struct swv_loop {
	struct swv_wire wire;
	uint32_t unplugged;	/**< atomic: control path writes, engine reads */
};

static bool
loop_link_up(struct swv_wire *wire)
{
	struct swv_loop *l = container_of(wire, struct swv_loop, wire);

	return !__atomic_load_n(&l->unplugged, __ATOMIC_RELAXED);
}

static int
loop_set_link(struct swv_wire *wire, bool up)
{
	struct swv_loop *l = container_of(wire, struct swv_loop, wire);

	__atomic_store_n(&l->unplugged, up ? 0 : 1, __ATOMIC_RELAXED);
	return 0;
}

static void
loop_close(struct swv_wire *wire)
{
	free(container_of(wire, struct swv_loop, wire));
}

static const struct swv_wire_ops loop_ops = {
	.tx = loop_tx,
	.tx_burst = loop_tx_burst,
	.tx_flush = mem_tx_flush,
	.rx_burst = mem_rx_burst,
	.link_up = loop_link_up,
	.set_link = loop_set_link,
	.speed_mbps = mem_speed,
	.rx_fd = mem_rx_fd,
	.close = loop_close,
};

int
swv_wire_loop_open(struct swv_device *dev, struct swv_wire **out)
{
	struct swv_loop *l = calloc(1, sizeof(*l));
	struct swv_wire *w;

	if (l == NULL)
		return ENOMEM;
	w = &l->wire;
	w->ops = &loop_ops;
	w->dev = dev;
	w->min_frame = SWV_MEM_MIN_FRAME;
	w->rx_pushed = true;
	*out = w;
	return 0;
}

/*
 * pair
 *
 * Cables live in a process-wide list guarded by swv_lock (wires are opened
 * and closed under it). An end's device pointer is read by the other end's
 * tx() on the engine thread, so it is published and withdrawn under RCU.
 */
struct swv_cable;

struct swv_pair_end {
	struct swv_wire wire;
	struct swv_cable *cable;
	unsigned int side;
	uint32_t unplugged;	/**< atomic: control path writes, engines read */
};

struct swv_cable {
	struct cds_list_head node;
	char name[SWV_NAME_MAX];
	struct swv_pair_end *end[2];	/**< RCU */
	int reg_fd;			/**< the name's registration, or -1 */
	bool foreign;			/**< another process holds the name */
	char note[3 * SWV_NAME_MAX + 160];	/**< when foreign */
};

static CDS_LIST_HEAD(swv_cables);

/*
 * Register a new cable's name machine-wide: a name another process holds
 * makes the cable foreign, with the warning its opens give.
 */
static void
cable_register(struct swv_cable *c)
{
	struct sockaddr_un sa;
	socklen_t len;
	int n;

	c->reg_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (c->reg_fd < 0)
		return;
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	n = snprintf(sa.sun_path + 1, sizeof(sa.sun_path) - 1,
		     "swverbs-pair/%s", c->name);
	len = (socklen_t)(offsetof(struct sockaddr_un, sun_path) + 1 + n);
	if (bind(c->reg_fd, (struct sockaddr *)&sa, len) == 0)
		return;
	if (errno == EADDRINUSE) {
		c->foreign = true;
		snprintf(c->note, sizeof(c->note),
			 "pair:%s: another process has a pair cable of that "
			 "name; this process got its own cable (pair cables "
			 "never leave a process): use shm:%s to join "
			 "processes", c->name, c->name);
	}
	close(c->reg_fd);
	c->reg_fd = -1;
}

static void
cable_free(struct swv_cable *c)
{
	cds_list_del(&c->node);
	if (c->reg_fd >= 0)
		close(c->reg_fd);
	free(c);
}

/*
 * The other end when the link is up (it exists, neither end unplugged),
 * else NULL. Inside an RCU read side.
 */
static struct swv_pair_end *
pair_carrier(struct swv_pair_end *e)
{
	struct swv_pair_end *peer = rcu_dereference(e->cable->end[e->side ^ 1]);

	if (peer == NULL ||
	    __atomic_load_n(&e->unplugged, __ATOMIC_RELAXED) ||
	    __atomic_load_n(&peer->unplugged, __ATOMIC_RELAXED))
		return NULL;
	return peer;
}

static int
pair_tx(struct swv_wire *wire, const struct iovec *iov, int iovcnt,
	uint32_t len)
{
	struct swv_pair_end *e = container_of(wire, struct swv_pair_end, wire);
	struct swv_pair_end *peer;

	peer = pair_carrier(e);
	if (peer != NULL) {
		swv_device_rx(peer->wire.dev, iov, iovcnt, len);
	} else {
		/* No carrier: the frame leaves into an unplugged cable. */
		swv_wire_tx_link_down(wire, len);
	}
	return 0;
}

static void
pair_tx_burst(struct swv_wire *wire, const struct swv_frame *fr,
	      unsigned int n)
{
	struct swv_pair_end *e = container_of(wire, struct swv_pair_end, wire);
	struct swv_pair_end *peer;
	unsigned int i;

	peer = pair_carrier(e);
	if (peer != NULL) {
		swv_device_rx_burst(peer->wire.dev, fr, n);
	} else {
		for (i = 0; i < n; i++)
			swv_wire_tx_link_down(wire, fr[i].len);
	}
}

static const char *
pair_note(struct swv_wire *wire)
{
	struct swv_pair_end *e = container_of(wire, struct swv_pair_end, wire);

	return e->cable->foreign ? e->cable->note : NULL;
}

static bool
pair_link_up(struct swv_wire *wire)
{
	struct swv_pair_end *e = container_of(wire, struct swv_pair_end, wire);

	return pair_carrier(e) != NULL;
}

static int
pair_set_link(struct swv_wire *wire, bool up)
{
	struct swv_pair_end *e = container_of(wire, struct swv_pair_end, wire);

	__atomic_store_n(&e->unplugged, up ? 0 : 1, __ATOMIC_RELAXED);
	return 0;
}

static struct swv_device *
pair_peer(struct swv_wire *wire)
{
	struct swv_pair_end *e = container_of(wire, struct swv_pair_end, wire);
	struct swv_pair_end *peer = e->cable->end[e->side ^ 1];

	return peer != NULL ? peer->wire.dev : NULL;
}

static void
pair_close(struct swv_wire *wire)
{
	struct swv_pair_end *e = container_of(wire, struct swv_pair_end, wire);
	struct swv_cable *c = e->cable;

	rcu_assign_pointer(c->end[e->side], NULL);
	synchronize_rcu();	/* the peer's tx() no longer reaches us */
	if (c->end[e->side ^ 1] == NULL)
		cable_free(c);
	free(e);
}

static const struct swv_wire_ops pair_ops = {
	.tx = pair_tx,
	.tx_burst = pair_tx_burst,
	.tx_flush = mem_tx_flush,
	.rx_burst = mem_rx_burst,
	.link_up = pair_link_up,
	.set_link = pair_set_link,
	.note = pair_note,
	.speed_mbps = mem_speed,
	.rx_fd = mem_rx_fd,
	.peer = pair_peer,
	.close = pair_close,
};

int
swv_wire_pair_open(struct swv_device *dev, const char *cable,
		   struct swv_wire **out)
{
	struct swv_cable *c = NULL;
	struct cds_list_head *node;
	struct swv_pair_end *e;
	unsigned int side;

	if (strlen(cable) >= SWV_NAME_MAX)
		return EINVAL;
	/* node by node: no container of the list head (see device.c) */
	cds_list_for_each(node, &swv_cables) {
		c = cds_list_entry(node, struct swv_cable, node);
		if (strcmp(c->name, cable) == 0)
			break;
		c = NULL;
	}
	if (c == NULL) {
		c = calloc(1, sizeof(*c));
		if (c == NULL)
			return ENOMEM;
		strcpy(c->name, cable);
		cds_list_add_tail(&c->node, &swv_cables);
		cable_register(c);
	}
	if (c->end[0] == NULL)
		side = 0;
	else if (c->end[1] == NULL)
		side = 1;
	else
		return EBUSY;
	e = calloc(1, sizeof(*e));
	if (e == NULL) {
		if (c->end[side ^ 1] == NULL)
			cable_free(c);
		return ENOMEM;
	}
	e->wire.ops = &pair_ops;
	e->wire.dev = dev;
	e->wire.min_frame = SWV_MEM_MIN_FRAME;
	e->wire.rx_pushed = true;
	e->cable = c;
	e->side = side;
	rcu_assign_pointer(c->end[side], e);
	*out = &e->wire;
	return 0;
}
