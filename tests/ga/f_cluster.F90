! GA suite, Fortran: node (cluster) queries through the Fortran API.
!
! ga_cluster_nnodes, ga_cluster_nodeid, ga_cluster_nprocs (every node),
! ga_cluster_procid and ga_cluster_proc_nodeid must describe the layout
! ARMCI_NODE_SIZE asks for (k consecutive ranks per node, 0 = one node);
! GA answers them from armci_domain_*. Each process then counts itself in
! a per-node tally with nga_acc (integer) and a per-node sum of ranks with
! nga_read_inc; the tallies must match the layout. A mirrored array
! (nga_create_config on ga_pgroup_get_mirror) is accumulated into per node
! and merged with ga_merge_mirrored. Last, ga_cluster_nprocs(-1), which
! GA's own ARMCI answers with the caller's node (an ARMCI that rejects -1
! ends the program there, so it comes after everything else).
program f_cluster
  implicit none
#include "mafdecls.fh"
#include "global.fh"
#include "gavoid.fh"
  integer :: me, np, nn, k, node, i, g_t, g_s, g_m, tally(0:3), sums(0:3), t
  integer :: gat_expected_nodes
  double precision :: mv(8), want(8), one
  external :: gat_expected_nodes

  call gat_begin()
  me = ga_nodeid()
  np = ga_nnodes()
  nn = gat_expected_nodes()
  k = (np + nn - 1) / nn

  call chk_i(ga_cluster_nnodes(), nn, 'ga_cluster_nnodes')
  call chk_i(ga_cluster_nodeid(), me / k, 'ga_cluster_nodeid')
  do node = 0, nn - 1
    call chk_i(ga_cluster_nprocs(node), min(k, np - node * k), 'ga_cluster_nprocs')
    do i = 0, min(k, np - node * k) - 1
      call chk_i(ga_cluster_procid(node, i), node * k + i, 'ga_cluster_procid')
    end do
  end do
  do i = 0, np - 1
    call chk_i(ga_cluster_proc_nodeid(i), i / k, 'ga_cluster_proc_nodeid')
  end do

  ! per-node tallies through one-sided integer operations
  call chk_l(nga_create(MT_INT, 1, [nn], 'tally', [-1], g_t), 'nga_create tally')
  call chk_l(nga_create(MT_INT, 1, [nn], 'sums', [-1], g_s), 'nga_create sums')
  call ga_zero(g_t)
  call ga_zero(g_s)
  call ga_sync()
  node = ga_cluster_nodeid()
  call nga_acc(g_t, [node + 1], [node + 1], [1], [1], 1)
  t = nga_read_inc(g_s, [node + 1], me)
  call chk_l(t >= 0, 'nga_read_inc result')
  call ga_sync()
  call nga_get(g_t, [1], [nn], tally, [1])
  call nga_get(g_s, [1], [nn], sums, [1])
  do node = 0, nn - 1
    call chk_i(tally(node), ga_cluster_nprocs(node), 'processes counted on a node')
    call chk_i(sums(node), sum([(i, i = node * k, node * k + ga_cluster_nprocs(node) - 1)]), &
               'sum of the ranks of a node')
  end do

  ! a mirrored array: one copy per node, merged across nodes
  call chk_l(nga_create_config(MT_DBL, 1, [8], 'mirrored', [-1], ga_pgroup_get_mirror(), g_m), &
             'nga_create_config mirrored')
  call ga_zero(g_m)
  call ga_sync()
  one = 1
  call nga_acc(g_m, [mod(me, 7) + 1], [mod(me, 7) + 1], [dble(me + 1)], [1], one)
  call nga_acc(g_m, [8], [8], [1d0], [1], one)
  call ga_sync()
  want = 0
  do i = 0, np - 1
    if (i / k == me / k) then
      want(mod(i, 7) + 1) = want(mod(i, 7) + 1) + i + 1
      want(8) = want(8) + 1
    end if
  end do
  call nga_get(g_m, [1], [8], mv, [1])
  call chk_i(count(mv /= want), 0, 'mirrored copy of my node: wrong elements')
  call ga_sync()
  call ga_merge_mirrored(g_m)
  want = 0
  do i = 0, np - 1
    want(mod(i, 7) + 1) = want(mod(i, 7) + 1) + i + 1
  end do
  want(8) = np
  call nga_get(g_m, [1], [8], mv, [1])
  call chk_i(count(mv /= want), 0, 'ga_merge_mirrored: wrong elements')
  call ga_sync()
  call chk_l(ga_destroy(g_m), 'ga_destroy mirrored')
  call chk_l(ga_destroy(g_s), 'ga_destroy sums')
  call chk_l(ga_destroy(g_t), 'ga_destroy tally')

  call chk_i(ga_cluster_nprocs(-1), ga_cluster_nprocs(ga_cluster_nodeid()), &
             'ga_cluster_nprocs(-1) (my node)')
  call gat_end('f_cluster')
end program f_cluster
