/* SPDX-License-Identifier: BSD-3-Clause */

/*
 * The engine's sleep and doorbell: a device idle for long enough sleeps until
 * a doorbell, a wire fd or a link check (every 100 ms); a send posted to a
 * sleeping engine rings the doorbell, which ends the sleep, not the next
 * link check. And destroying the last device stops a sleeping engine the
 * same way. The engine counts the sleeps its doorbell ended: the tests
 * check that count, never a time.
 */

#include <errno.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "swv_priv.h"
#include "swv_test_util.h"
#include "test.h"

/*
 * A post to an engine in its deep sleep (it waits up to 100 ms for a wire
 * fd or the doorbell) rings the doorbell, and the doorbell is what ends
 * the sleep: counted by the engine, not timed, so a loaded machine cannot
 * make it fail or pass.
 */
static int
test_doorbell_wakes_sleeping_engine(void)
{
	static uint8_t tbuf[256], rbuf[2048];
	struct ibv_mr *tmr, *rmr;
	struct ibv_flow *fl;
	struct ibv_wc wc;
	struct tdev d;
	uint64_t w0;
	int round;

	TEST_ASSERT_SUCCESS(t_setup(&d, "bell", "loop"), "");
	tmr = swv_reg_mr(d.pd, tbuf, sizeof(tbuf), 0);
	rmr = swv_reg_mr(d.pd, rbuf, sizeof(rbuf), IBV_ACCESS_LOCAL_WRITE);
	TEST_ASSERT(tmr != NULL && rmr != NULL, "reg_mr: %d", errno);
	fl = t_flow_eth(d.rqp, d.mac, 0);
	TEST_ASSERT_NOT_NULL(fl, "flow: %d", errno);
	t_frame(tbuf, 64, d.mac, d.mac, 1);
	for (round = 0; round < 5; round++) {
		TEST_ASSERT_SUCCESS(t_recv(d.rqp, rmr, rbuf, sizeof(rbuf), 1),
				    "");
		/* Let the engine fall into its deep sleep. */
		T_WAIT(__atomic_load_n(&swv_engine_asleep, __ATOMIC_ACQUIRE));
		TEST_ASSERT(__atomic_load_n(&swv_engine_asleep,
					    __ATOMIC_ACQUIRE), "asleep");
		w0 = __atomic_load_n(&swv_engine_bell_wakes, __ATOMIC_ACQUIRE);
		TEST_ASSERT_SUCCESS(t_send(d.sqp, tmr, tbuf, 64, 2), "");
		TEST_ASSERT_EQUAL(t_poll(d.rcq, &wc, 1, 1000), 1,
				  "frame received");
		TEST_ASSERT_EQUAL(wc.status, IBV_WC_SUCCESS, "");
		TEST_ASSERT_EQUAL(wc.byte_len, 64, "");
		TEST_ASSERT_EQUAL(t_poll(d.scq, &wc, 1, 1000), 1,
				  "send completion");
		TEST_ASSERT(__atomic_load_n(&swv_engine_bell_wakes,
					    __ATOMIC_ACQUIRE) > w0,
			    "the doorbell did not end the engine's sleep");
	}
	swv_destroy_flow(fl);
	swv_dereg_mr(tmr);
	swv_dereg_mr(rmr);
	t_teardown(&d);
	return TEST_SUCCESS;
}

static int
test_sleeping_engine_stops_at_once(void)
{
	struct tdev d;
	uint64_t w0;
	int i;

	/* The stop rings the doorbell, which ends the sleep (counted). */
	for (i = 0; i < 5; i++) {
		TEST_ASSERT_SUCCESS(t_setup(&d, "stop", "loop"), "");
		T_WAIT(__atomic_load_n(&swv_engine_asleep, __ATOMIC_ACQUIRE));
		TEST_ASSERT(__atomic_load_n(&swv_engine_asleep,
					    __ATOMIC_ACQUIRE), "asleep");
		w0 = __atomic_load_n(&swv_engine_bell_wakes, __ATOMIC_ACQUIRE);
		t_teardown(&d);
		TEST_ASSERT(__atomic_load_n(&swv_engine_bell_wakes,
					    __ATOMIC_ACQUIRE) > w0,
			    "destroy waited for the engine's timeout");
	}
	return TEST_SUCCESS;
}

/*
 * SGE lengths that add up past 4 GiB must not wrap into a short frame: the
 * send completes with a length error. Two SGEs of 2 GiB + 32 bytes each,
 * inside one MR over reserved (never touched) address space, would wrap to
 * 64 bytes in 32-bit arithmetic.
 */
static int
test_sge_length_sum_no_wrap(void)
{
	const size_t half = (size_t)1 << 31;
	const size_t span = 2 * half + 4096;
	struct ibv_send_wr wr, *bad = NULL;
	struct ibv_sge sge[2];
	struct ibv_wc wc;
	struct ibv_mr *mr;
	struct tdev d;
	uint8_t *va;

	va = mmap(NULL, span, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS |
		  MAP_NORESERVE, -1, 0);
	if (va == MAP_FAILED)
		TEST_SKIP("no 4 GiB of address space: %d", errno);
	TEST_ASSERT_SUCCESS(t_setup(&d, "wrap", "loop"), "");
	mr = swv_reg_mr(d.pd, va, span, 0);
	TEST_ASSERT_NOT_NULL(mr, "reg_mr: %d", errno);
	sge[0].addr = (uintptr_t)va;
	sge[0].length = (uint32_t)(half + 32);
	sge[0].lkey = mr->lkey;
	sge[1] = sge[0];
	sge[1].addr = (uintptr_t)va + half + 64;
	memset(&wr, 0, sizeof(wr));
	wr.wr_id = 7;
	wr.sg_list = sge;
	wr.num_sge = 2;
	wr.opcode = IBV_WR_SEND;
	wr.send_flags = IBV_SEND_SIGNALED;
	TEST_ASSERT_SUCCESS(ibv_post_send(d.sqp, &wr, &bad), "post");
	TEST_ASSERT_EQUAL(t_poll(d.scq, &wc, 1, 1000), 1, "completion");
	TEST_ASSERT_EQUAL(wc.wr_id, 7, "");
	TEST_ASSERT_EQUAL(wc.status, IBV_WC_LOC_LEN_ERR,
			  "a 4 GiB frame was sent as a short one");
	swv_destroy_qp(d.sqp);
	d.sqp = NULL;
	swv_dereg_mr(mr);
	t_teardown(&d);
	munmap(va, span);
	return TEST_SUCCESS;
}

static struct unit_test_suite engine_suite = {
	.name = "swverbs engine",
	.cases = {
		TEST_CASE(test_doorbell_wakes_sleeping_engine),
		TEST_CASE(test_sleeping_engine_stops_at_once),
		TEST_CASE(test_sge_length_sum_no_wrap),
		TEST_CASES_END(),
	},
};

int
main(void)
{
	return unit_test_suite_runner(&engine_suite);
}
