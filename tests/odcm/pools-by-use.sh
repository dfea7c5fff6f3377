#!/bin/sh
# pools-by-use.sh RUN_MPI TEST_PATTERNS TEST_RMA RANDOMACCESS TEST_RDMA_ONLY: registered pools
# grow with use, within their bounds (docs/SCALING.md, "Registered buffers"), as the connection
# report counts them:
# - a data server's request buffers grow by one client's allowance (ARMCI_SERVER_CREDITS) for
#   each client connected that sends requests: between a ring and an all-to-all job of the same
#   size, the per-process receive pools differ by 8 buffers of ARMCI_SERVER_BUF_SIZE (+ a
#   header) per server connection more; a job whose connections carry RDMA alone (contiguous
#   puts and gets, the RDMA barrier) keeps the first allowance, as the ring does;
# - the bounce buffers stay at their first chunk (4) when small operations are all a job does,
#   and grow past it when large transfers are in flight together;
# - requests take small buffers (a data server's request buffer, 8 KiB), not bounce buffers of
#   64 KiB: RandomAccess's accumulates in flight grow the small pool and leave the bounce pool
#   at its first chunk;
# - the connection channel's receives (an MTU each) grow with use: a client's keep two answers
#   of each setup under way, its first chunk of 8 while it sets up one connection at a time
#   (ring), 16 when it sets up five at once (fanout); a data server's keep two messages of
#   each client, its first chunk of 16 for one client (ring) as for five (fanout);
# - a connection's send-queue state (its chain of requests not posted yet and its replay log)
#   is sized by what it has in flight, not by the send queue's depth: under 8 KiB a connection
#   in the all-to-all job of small operations (about 3.6 KiB; at the depth of 64: 20 KiB).
run_mpi=$1 patterns=$2 rma=$3 randomaccess=$4 rdma_only=$5
report=$(mktemp)
trap 'rm -f "$report"' EXIT
field() { "$(dirname "$0")/../conn-report-field.sh" "$1" "$report"; }
fail() { echo "FAIL: $*"; exit 1; }
export ARMCI_HYBRID=off ARMCI_SERVER_CREDITS=8 ARMCI_SERVER_BUFS=64 ARMCI_SERVER_BUF_SIZE=65536
run() { : >"$report"; ARMCI_CONN_REPORT=file:$report "$run_mpi" "$@" >/dev/null 2>&1 || fail "$* failed"; }

run 6 "$patterns" ring
recv_ring=$(field mem_buf_recv_avg) s2c_ring=$(field s2c_avg) bounce_ring=$(field mem_buf_bounce_avg)
channel_ring=$(field mem_buf_channel_avg)
run 6 "$patterns" fanout
channel_fanout=$(field mem_buf_channel_avg)
echo "connection channel: ring $channel_ring B, fanout $channel_fanout B"
# receives of softib's MTU and the GRH; the two endpoints' 16 send buffers of 128 B and records
mtu_buf=$((4096 + 40)) sends=8192
[ "$channel_ring" -le $(((16 + 8) * mtu_buf + sends)) ] ||
    fail "the channel took more than its first chunks (16 + 8 receives) for one client at a time"
[ "$channel_fanout" -gt $(((16 + 8) * mtu_buf + sends)) ] &&
    [ "$channel_fanout" -le $(((16 + 16) * mtu_buf + sends)) ] ||
    fail "the client's channel did not grow to 16 receives for 5 setups at once, or the server's grew past 16 for 5 clients"
run 6 "$patterns" alltoall
recv_all=$(field mem_buf_recv_avg) s2c_all=$(field s2c_avg)
echo "ring: receive pools $recv_ring B, $s2c_ring server connections, bounce $bounce_ring B"
echo "all-to-all: receive pools $recv_all B, $s2c_all server connections"
sendq_all=$(field mem_sendq_avg) c2s_all=$(field c2s_avg)
awk -v q="$sendq_all" -v c="$c2s_all" 'BEGIN {
    printf "send-queue state per connection: %.0f B (%s B over %s connections)\n", q / c, q, c
    exit !(c > 0 && q / c <= 8192) }' ||
    fail "the send-queue state is not sized by what is in flight"
awk -v a="$recv_all" -v r="$recv_ring" -v sa="$s2c_all" -v sr="$s2c_ring" 'BEGIN {
    per = (a - r) / ((sa - sr) * 8)
    printf "per request buffer added: %.0f B\n", per
    exit !(sa > sr && per >= 65536 && per <= 65536 + 512) }' ||
    fail "the request buffers did not grow by 8 per server connection"
ARMCI_BARRIER=rdma run 6 "$rdma_only"
recv_rdma=$(field mem_buf_recv_avg) s2c_rdma=$(field s2c_avg)
echo "RDMA alone: receive pools $recv_rdma B, $s2c_rdma server connections"
awk -v s="$s2c_rdma" 'BEGIN { exit !(s >= 4) }' ||
    fail "the RDMA-only job made $s2c_rdma server connections a process, not 5"
[ "$recv_rdma" -eq "$recv_ring" ] ||
    fail "connections that never sent a request grew the request buffers: $recv_rdma B, ring $recv_ring B"
# 4 buffers of 64 KiB and the records of 32
[ "$bounce_ring" -le $((4 * 65536 + 32 * 64)) ] || fail "bounce buffers past their first chunk: $bounce_ring B"

# From here the default request buffers (8 KiB): what a small buffer holds.
export ARMCI_SERVER_BUF_SIZE=8192
run 4 "$rma" 65536 5
bounce=$(field mem_buf_bounce_avg)
echo "64 KiB transfers: bounce $bounce B"
[ "$bounce" -gt $((4 * 65536 + 32 * 64)) ] || fail "the bounce buffers never grew: $bounce B"

# Requests in flight: the server's own request-buffer size (8 KiB) sizes the small buffers.
run 6 "$randomaccess" -l 12
bounce=$(field mem_buf_bounce_avg) small=$(field mem_buf_small_avg)
echo "RandomAccess: bounce $bounce B, small $small B"
[ "$bounce" -le $((4 * 65536 + 32 * 64)) ] || fail "requests took bounce buffers: $bounce B"
[ "$small" -gt $((4 * 8192 + 32 * 64)) ] && [ "$small" -le $((32 * 8192 + 32 * 64)) ] ||
    fail "the small buffers did not grow with the requests in flight, within 32 of 8 KiB: $small B"
echo "PASS"
