#!/bin/sh
# Mutation check: builds libarmci with each deliberate bug of armci/core/mutant.h compiled in
# (meson option `mutant`) and runs the tests that should notice it. Every mutant must be
# caught (one of its tests fails); a mutant that survives is a hole in the test suites.
#
#   scripts/mutants.sh [BUILD_ROOT]      (default: build-mutants beside this tree)
#   scripts/mutants.sh BUILD_ROOT NAME...   only these mutants
#
# One build directory, BUILD_ROOT/mutant, is reconfigured for each mutant: only the library
# and the tests that link its objects are rebuilt. The tests first run once without a mutant
# (they must pass there, or a failure would prove nothing). Prints `killed NAME by TEST` or
# `SURVIVED NAME` per mutant; exits 1 if any survived or the baseline failed.
# MUTANTS_TIMEOUT_MULTIPLIER (default 0.3) shortens the tests' timeouts: some mutants hang.
# MUTANTS_TESTS="TEST..." runs these tests for every mutant instead of the table's (to see
# what one test catches).
set -u
src=$(cd "$(dirname "$0")/.." && pwd)
root=${1:-$src/build-mutants}
[ $# -gt 0 ] && shift
dir=$root/mutant
multiplier=${MUTANTS_TIMEOUT_MULTIPLIER:-0.3}
log=$root/mutants.log

# NAME: the tests that kill it, the cheapest first (docs/TESTING.md, Mutation check, lists the same).
table='
fence_noop soak-15s-6x3
order_wait_skipped ordering-4x2
credits_never_returned ordering-4x2
reply_batch_cut rma-4x2
cap_closes_busy soak-15s-6x3
acc_twice rma-4x2
rmw_returns_new rmw-mixed-4x2-server
rmw_same_node_cpu rmw-mixed-4x2-device
rmw_swap_no_retry rmw-mixed-4x2-device
lock_queue_lifo lock-fifo-4x1
stride_ignored strided-4x1
vector_piece_skipped strided-4x1
vector_scatter_shifted strided-4x1
vector_chain_overtakes ordering-4x2
dgram_reexecute fuzz-corpus-dgram rmw-mixed-ud-faults-4x2 randomaccess-ud-faults-4x1
kept_ring_fixed fuzz-corpus-dgram exactly-once-ud-faults-4x1
kept_grown_unmoved fuzz-corpus-dgram exactly-once-ud-faults-4x1
promote_price_fixed promote-backoff-6x2
dgram_never_segmented route-plan
dgram_segment_unmoved rma-ud-4x2 exactly-once-ud-faults-4x1
pulled_in_place_shares exactly-once-rc-break-4x1
answer_bufs_fixed ud-buffers-6x1
index_private_copy seg-memory-grows-with-nodes
index_hint_trusted seg-resolve-4x2 malloc-4x2-t3
regular_place_unaligned symmetric-4x2
run_place_unstepped symmetric-4x2
runs_never_merged symmetric-4x1
server_offset_ignored server-symmetric-4x1 server-symmetric-4x2
entry_sender_unchecked ud-forged-entries-4x2
lookup_asked_once directory-9x1-udloss directory-9x1-ud-udloss
ud_retransmission_dropped udloss-alltoall-6x1-overlap
msg_op_ignored msg-4x2
barrier_skips_round 4x2
get_wrong_offset rma-4x2
reg_cache_evict_in_flight user-memory-2x1-cache-1-deferred
reg_cache_start_only user-gets-2x1
register_local_never user-gets-2x1
reg_cache_any_device rdma-core-user-gets
chain_not_posted_on_wait chain-2x1
chain_tail_miscounted chain-2x1
chain_blocking_deferred chain-2x1
pack_more_unset chain-2x1
pack_unpadded chain-2x1
shared_send_credit_each shared-send-answers
shared_refusal_unanswered fuzz-corpus-ds
replay_applied_twice rma-rc-break-4x2 randomaccess-rc-break-4x2 fuzz-corpus-dgram
replay_skipped rma-rc-break-4x2
replay_reordered rma-rc-break-4x2 ordering-rc-break-4x2
server_drops_broken exactly-once-broken-ends-4x1
pull_failure_kept exactly-once-broken-ends-4x1 exactly-once-rc-break-4x1 fuzz-corpus-dgram
pulled_unread pulled-hotspot-recovery-off-4x1 pulled-recovery-off-4x1 rma-4x2
log_full_depth pools-by-use-6x1
chain_grown_unlinked chain-2x1 rma-4x2
log_grown_inline_stale chain-client-4x2 rma-rc-break-static-4x2 rma-rc-break-serial-4x2
pulled_failure_served exactly-once-pulled-hotspot-4x1 exactly-once-broken-ends-4x1 exactly-once-rc-break-4x1
replay_headers_only exactly-once-server-loses-4x1
in_place_released_at_send exactly-once-server-loses-4x1 exactly-once-both-ends-4x1
dgram_fence_noop exactly-once-ud-faults-4x1
unlock_unwaited exactly-once-unlock-lost-4x1
ud_check_noop ud-all-attacks-silent-err-4x2
ud_probe_ignored ud-all-attacks-deaf-reset-4x2
ud_recv_message_size ud-all-attacks-full-buffers-4x2
ud_send_stall_ignored rma-ud-send-stall-4x2
server_pool_unfit pools-by-use-6x1
request_bufs_at_setup pools-by-use-6x1
bounce_pool_full pools-by-use-6x1
requests_in_bounce_buffers pools-by-use-6x1
small_buffer_overrun rma-4x2
channel_receives_at_init pools-by-use-6x1
client_channel_unfit pools-by-use-6x1
finalize_undrained finalize-async-stall-np4
trim_with_buffer_out buffer-pool
bounce_never_trimmed pool-trim-4x2
free_keeps_mapping malloc-cycles-4x2
'
if [ -n "${MUTANTS_TESTS:-}" ]; then
    table=$(echo "$table" | while read -r name tests; do
        [ -n "$name" ] && echo "$name $MUTANTS_TESTS"
    done)
fi
if [ $# -gt 0 ]; then
    wanted=" $* "
    table=$(echo "$table" | while read -r name tests; do
        case "$wanted" in *" $name "*) echo "$name $tests" ;; esac
    done)
fi

mkdir -p "$root"
: >"$log"
start=$(date +%s)
configure() {
    if [ -d "$dir" ]; then
        meson configure "$dir" -Dmutant="$1" >>"$log" 2>&1
    else
        meson setup "$dir" "$src" -Dbench=false -Dmutant="$1" >>"$log" 2>&1
    fi && ninja -C "$dir" -j2 >>"$log" 2>&1
} </dev/null
# run_test NAME: one test, quietly; its status.
run_test() {
    meson test -C "$dir" --no-rebuild --print-errorlogs --timeout-multiplier "$multiplier" "$1" >>"$log" 2>&1 </dev/null
}

configure '' || { echo "mutants.sh: the build without a mutant failed (see $log)"; exit 1; }
# Every named test must exist (meson test passes when a name matches nothing) and pass.
meson test -C "$dir" --list >"$root/tests.list" 2>>"$log" </dev/null
baseline_ok=true
for t in $(echo "$table" | while read -r name tests; do echo "$tests"; done | tr ' ' '\n' | sort -u); do
    if ! grep -q " / $t\$" "$root/tests.list"; then
        echo "mutants.sh: no test named $t"
        baseline_ok=false
    elif ! run_test "$t"; then
        echo "mutants.sh: $t fails without a mutant (see $log)"
        baseline_ok=false
    fi
done
$baseline_ok || exit 1

survived=0
count=0
while read -r name tests; do
    [ -n "$name" ] || continue
    count=$((count + 1))
    if ! grep -rq "ARMCI_MUTANT_IS($name)" "$src/armci"; then
        echo "SURVIVED $name (no such mutation point in armci/)"
        survived=$((survived + 1))
        continue
    fi
    if ! configure "$name"; then
        echo "SURVIVED $name (did not build: see $log)"
        survived=$((survived + 1))
        continue
    fi
    killer=
    for t in $tests; do
        if ! run_test "$t"; then
            killer=$t
            break
        fi
    done
    if [ -n "$killer" ]; then
        echo "killed $name by $killer"
    else
        echo "SURVIVED $name"
        survived=$((survived + 1))
    fi
done <<END
$table
END
configure '' >/dev/null 2>&1 # leave the directory without a bug compiled in
echo "mutants: $((count - survived)) of $count killed in $(($(date +%s) - start)) s (log: $log)"
[ "$survived" -eq 0 ]
