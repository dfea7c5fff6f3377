! GA suite, Fortran: ghost cells and periodic operations.
!
! A 2-D double array with ghost widths 1 x 2 (nga_create_ghosts) is filled
! with nga_put; ga_update_ghosts must leave every ghost cell, corners
! included, equal to the periodically wrapped global element, read through
! nga_access_ghosts (index into dbl_mb) together with the interior. Then
! the data changes and nga_update_ghost_dir refreshes the edges direction
! by direction. GA does the local part of a ghost update with
! armci_read_strided/armci_write_strided and the rest with strided ARMCI
! transfers, so a strided copy with its direction mixed up shows here.
! nga_periodic_put/get/acc on a plain array address patches that run off
! both ends and wrap around. All values are small integers: exact checks.
program f_ghosts
  implicit none
#include "mafdecls.fh"
#include "global.fh"
  integer, parameter :: n = 11, m = 10
  integer :: me, np, g_h, g_p, lo(2), hi(2), gd(2), ld(1), a, b, bad, first, last, d, dir
  integer(kind=8) :: idx
  double precision :: buf(n, m), pb(8, 6), want(n, m), got(n, m)
  double precision, external :: gval

  call gat_begin()
  me = ga_nodeid()
  np = ga_nnodes()

  ! periodic operations: rows -2..5 and columns m-3..m+2 of an n x m array
  call chk_l(nga_create(MT_DBL, 2, [n, m], 'periodic', [-1, -1], g_p), 'nga_create periodic')
  call ga_zero(g_p)
  call ga_sync()
  do b = 1, 6
    do a = 1, 8
      pb(a, b) = 100 * a + b
    end do
  end do
  if (me == np - 1) call nga_periodic_put(g_p, [-2, m - 3], [5, m + 2], pb, [8])
  call ga_sync()
  want = 0
  do b = 1, 6
    do a = 1, 8
      want(wrap(a - 3, n), wrap(m - 4 + b, m)) = 100 * a + b
    end do
  end do
  call nga_get(g_p, [1, 1], [n, m], got, [n])
  call chk_i(count(got /= want), 0, 'nga_periodic_put: wrong elements')
  pb = 0
  call nga_periodic_get(g_p, [-2, m - 3], [5, m + 2], pb, [8])
  bad = 0
  do b = 1, 6
    do a = 1, 8
      if (pb(a, b) /= 100 * a + b) bad = bad + 1
    end do
  end do
  call chk_i(bad, 0, 'nga_periodic_get: wrong elements')
  call ga_sync()
  do b = 1, 6
    do a = 1, 8
      pb(a, b) = a - b
      want(wrap(a - 3, n), wrap(m - 4 + b, m)) = want(wrap(a - 3, n), wrap(m - 4 + b, m)) &
                                                  + 3 * np * (a - b)
    end do
  end do
  call nga_periodic_acc(g_p, [-2, m - 3], [5, m + 2], pb, [8], 3d0)
  call ga_sync()
  call nga_get(g_p, [1, 1], [n, m], got, [n])
  call chk_i(count(got /= want), 0, 'nga_periodic_acc: wrong elements')

  ! ghosts
  call chk_l(nga_create_ghosts(MT_DBL, 2, [n, m], [1, 2], 'ghosts', [-1, -1], g_h), &
             'nga_create_ghosts')
  call chk_l(ga_has_ghosts(g_h), 'ga_has_ghosts')
  call ga_zero(g_h)
  call put_all(0d0)
  call ga_update_ghosts(g_h)
  call check_ghosts(0d0, .false., 'ga_update_ghosts')
  call ga_sync()
  call put_all(0.5d0)
  do d = 1, 2
    do dir = -1, 1, 2
      call chk_l(nga_update_ghost_dir(g_h, d, dir, .false.), 'nga_update_ghost_dir')
    end do
  end do
  call ga_sync()
  call check_ghosts(0.5d0, .true., 'nga_update_ghost_dir')

  call ga_sync()
  call chk_l(ga_destroy(g_h), 'ga_destroy ghosts')
  call chk_l(ga_destroy(g_p), 'ga_destroy periodic')
  call gat_end('f_ghosts')

contains

  integer function wrap(i, nn)
    integer, intent(in) :: i, nn
    wrap = modulo(i - 1, nn) + 1
  end function wrap

  ! each process puts its band of columns of gval + add
  subroutine put_all(add)
    double precision, intent(in) :: add
    integer :: ii, jj
    first = m * me / np + 1
    last = m * (me + 1) / np
    if (first <= last) then
      do jj = first, last
        do ii = 1, n
          buf(ii, jj - first + 1) = gval(ii, jj) + add
        end do
      end do
      call nga_put(g_h, [1, first], [n, last], buf, [n])
    end if
    call ga_sync()
  end subroutine put_all

  ! compare the local block and its ghosts (edges only: not the corners)
  subroutine check_ghosts(add, edges_only, what)
    double precision, intent(in) :: add
    logical, intent(in) :: edges_only
    character(len=*), intent(in) :: what
    integer :: ii, jj, gi, gj, nbad, w(2)
    logical :: out1, out2
    w = [1, 2]
    call nga_distribution(g_h, me, lo, hi)
    if (any(hi < lo)) return
    call nga_access_ghosts(g_h, gd, idx, ld)
    call chk_i(gd(1), hi(1) - lo(1) + 1 + 2 * w(1), what // ': ghost dims 1')
    call chk_i(gd(2), hi(2) - lo(2) + 1 + 2 * w(2), what // ': ghost dims 2')
    nbad = 0
    do jj = 0, gd(2) - 1
      do ii = 0, gd(1) - 1
        gi = lo(1) - w(1) + ii
        gj = lo(2) - w(2) + jj
        out1 = gi < lo(1) .or. gi > hi(1)
        out2 = gj < lo(2) .or. gj > hi(2)
        if (edges_only .and. (out1 .eqv. out2)) cycle
        if (dbl_mb(idx + ii + jj * ld(1)) /= gval(wrap(gi, n), wrap(gj, m)) + add) then
          if (nbad == 0) call chk_d(dbl_mb(idx + ii + jj * ld(1)), &
                                    gval(wrap(gi, n), wrap(gj, m)) + add, what)
          nbad = nbad + 1
        end if
      end do
    end do
    call nga_release_ghosts(g_h)
    call chk_i(nbad, 0, what // ': wrong cells')
  end subroutine check_ghosts

end program f_ghosts

double precision function gval(i, j)
  implicit none
  integer, intent(in) :: i, j
  gval = 100 * i + j
end function gval
