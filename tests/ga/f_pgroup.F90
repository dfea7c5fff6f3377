! GA suite, Fortran: processor groups.
!
! ga_pgroup_create is called by every process for the lower and the upper
! half of the ranks, so each process also holds the handle of a group it
! is not in (ga_pgroup_nodeid answers -1 there); ga_pgroup_split_irreg
! makes even/odd colour groups. Members check ga_pgroup_nnodes /
! ga_pgroup_nodeid / ga_pgroup_absolute_id, reduce with ga_pgroup_dgop and
! ga_pgroup_igop (ops as literals and as unterminated substrings), and
! broadcast with ga_pgroup_brdcst. A group array is built with the handle
! API (ga_create_handle, ga_set_data, ga_set_pgroup, ga_allocate) and used
! with nga_put / nga_acc / nga_get under ga_pgroup_sync only. With
! ga_pgroup_set_default the group becomes the default: ga_nnodes,
! ga_nodeid, ga_sync, ga_dgop and nga_create act on it. The groups are
! destroyed collectively at the end.
program f_pgroup
  implicit none
#include "mafdecls.fh"
#include "global.fh"
#include "gavoid.fh"
  integer :: me, np, half, g_low, g_high, g_col, mine, other, first, size
  character(len=12) :: ops

  call gat_begin()
  me = ga_nodeid()
  np = ga_nnodes()
  ops = '+maxminxx'

  half = (np + 1) / 2
  g_low = ga_pgroup_create([(first, first = 0, half - 1)], half)
  g_high = -1
  if (np > 1) g_high = ga_pgroup_create([(first, first = half, np - 1)], np - half)
  if (me < half) then
    mine = g_low
    other = g_high
    first = 0
    size = half
  else
    mine = g_high
    other = g_low
    first = half
    size = np - half
  end if
  if (other >= 0) call chk_i(ga_pgroup_nodeid(other), -1, 'ga_pgroup_nodeid of a non-member')
  call member_work(mine, first, 1, size, 'halves')
  call ga_sync()

  ! even/odd colours
  g_col = ga_pgroup_split_irreg(ga_pgroup_get_world(), mod(me, 2))
  call member_work(g_col, mod(me, 2), 2, (np - mod(me, 2) + 1) / 2, 'colours')
  call ga_sync()

  if (np > 1) call chk_l(ga_pgroup_destroy(g_high), 'ga_pgroup_destroy high')
  call chk_l(ga_pgroup_destroy(g_low), 'ga_pgroup_destroy low')
  call gat_end('f_pgroup')

contains

  ! the group's members are first, first + stride, ..., size of them
  subroutine member_work(grp, first, stride, size, what)
    integer, intent(in) :: grp, first, stride, size
    character(len=*), intent(in) :: what
    integer :: idx, i, x(2), g_a, g_d, esum
    double precision :: d(2), buf(6, 5), got(6, 5), alpha, y
    double precision :: msg(3)

    idx = (me - first) / stride
    call chk_i(ga_pgroup_nnodes(grp), size, what // ': ga_pgroup_nnodes')
    call chk_i(ga_pgroup_nodeid(grp), idx, what // ': ga_pgroup_nodeid')
    do i = 0, size - 1
      call chk_i(ga_pgroup_absolute_id(grp, i), first + i * stride, what // ': ga_pgroup_absolute_id')
    end do

    esum = 0
    do i = 0, size - 1
      esum = esum + first + i * stride
    end do
    d = [dble(me), -dble(me)]
    x = [me * 2_8**36, 1]
    call ga_pgroup_dgop(grp, MT_DBL, d, 2, '+')
    call ga_pgroup_igop(grp, MT_INT, x, 2, ops(1:1))
    call chk_d(d(1), dble(esum), what // ': ga_pgroup_dgop +')
    call chk_d(d(2), -dble(esum), what // ': ga_pgroup_dgop + (negative)')
    call chk_i(x(1), esum * 2_8**36, what // ': ga_pgroup_igop +')
    call chk_i(x(2), size, what // ': ga_pgroup_igop + (count)')
    d = [dble(me), dble(me)]
    call ga_pgroup_dgop(grp, MT_DBL, d(1), 1, ops(2:4))
    call ga_pgroup_dgop(grp, MT_DBL, d(2), 1, 'min')
    call chk_d(d(1), dble(first + (size - 1) * stride), what // ': ga_pgroup_dgop max')
    call chk_d(d(2), dble(first), what // ': ga_pgroup_dgop min')

    msg = -1
    if (idx == 0) msg = [1.5d0, dble(me), dble(size)]
    call ga_pgroup_brdcst(grp, MT_DBL, msg, 3 * ma_sizeof(MT_DBL, 1, MT_BYTE), 0)
    call chk_l(all(msg == [1.5d0, dble(first), dble(size)]), what // ': ga_pgroup_brdcst')

    ! a group array through the handle API
    g_a = ga_create_handle()
    call ga_set_data(g_a, 2, [6, 5], MT_DBL)
    call ga_set_array_name(g_a, 'group array')
    call ga_set_pgroup(g_a, grp)
    call chk_l(ga_allocate(g_a), what // ': ga_allocate')
    call ga_zero(g_a)
    call ga_pgroup_sync(grp)
    buf = reshape([(dble(i + first), i = 1, 30)], [6, 5])
    if (idx == size - 1) call nga_put(g_a, [1, 1], [6, 5], buf, [6])
    call ga_pgroup_sync(grp)
    alpha = idx + 1
    call nga_acc(g_a, [1, 1], [6, 5], buf, [6], alpha)
    call ga_pgroup_sync(grp)
    call nga_get(g_a, [1, 1], [6, 5], got, [6])
    call chk_i(count(got /= buf * (1 + size * (size + 1) / 2)), 0, what // ': group array')
    call ga_pgroup_sync(grp)
    call chk_l(ga_destroy(g_a), what // ': ga_destroy group array')

    ! the group as default group
    call ga_pgroup_set_default(grp)
    call chk_i(ga_nnodes(), size, what // ': ga_nnodes on the default group')
    call chk_i(ga_nodeid(), idx, what // ': ga_nodeid on the default group')
    call chk_l(nga_create(MT_DBL, 1, [10], 'default group', [-1], g_d), what // ': nga_create')
    call ga_fill(g_d, 2d0)
    call chk_d(ga_ddot(g_d, g_d), 40d0, what // ': ga_ddot on the default group')
    y = 1
    call ga_dgop(MT_DBL, y, 1, '+')
    call chk_d(y, dble(size), what // ': ga_dgop on the default group')
    call ga_sync()
    call chk_l(ga_destroy(g_d), what // ': ga_destroy default group array')
    call ga_pgroup_set_default(ga_pgroup_get_world())
  end subroutine member_work

end program f_pgroup
