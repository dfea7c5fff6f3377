! GA suite, Fortran: the classic 2-D Fortran API that old GA applications use.
!
! ga_create (regular, with a chunk hint) / ga_inquire / ga_distribution,
! ga_put and ga_get by column bands that cross owners (Fortran is column
! major: a band of columns is contiguous in the buffer), ga_get of an inner
! patch into a buffer with a padded leading dimension, ga_acc from every
! process, ga_duplicate / ga_copy / ga_zero / ga_fill, ga_scale, ga_add and
! ga_ddot, with ga_sync between phases. Values are small integers so every
! check is an exact comparison. The integers passed to GA are 8 bytes
! (-fdefault-integer-8, GA's Integer): a wrong size shows at once here.
program f_basic
  implicit none
#include "mafdecls.fh"
#include "global.fh"
  integer, parameter :: n = 37, m = 29
  integer :: me, np, g_a, g_b, g_c, typ, d1, d2, p, ilo, ihi, jlo, jhi, i, j
  integer :: first, last, nwrong
  double precision :: buf(n + 3, m), alpha, ref, dot
  double precision, external :: aval

  call gat_begin()
  me = ga_nodeid()
  np = ga_nnodes()

  call chk_l(ga_create(MT_DBL, n, m, 'A', 5, -1, g_a), 'ga_create A')
  call ga_inquire(g_a, typ, d1, d2)
  call chk_i(typ, MT_DBL, 'ga_inquire type')
  call chk_i(d1, n, 'ga_inquire dim1')
  call chk_i(d2, m, 'ga_inquire dim2')
  ! the blocks of all processes tile the array exactly once
  nwrong = 0
  do p = 0, np - 1
    call ga_distribution(g_a, p, ilo, ihi, jlo, jhi)
    if (ihi >= ilo .and. jhi >= jlo) nwrong = nwrong + (ihi - ilo + 1) * (jhi - jlo + 1)
  end do
  call chk_i(nwrong, n * m, 'elements owned by all processes')

  ! each process puts its band of columns
  call ga_zero(g_a)
  first = m * me / np + 1
  last = m * (me + 1) / np
  if (first <= last) then
    do j = first, last
      do i = 1, n
        buf(i, j - first + 1) = aval(i, j)
      end do
    end do
    call ga_put(g_a, 1, n, first, last, buf, n + 3)
  end if
  call ga_sync()
  call check(g_a, 1, n, 1, m, 1d0, 'put/get whole')
  call check(g_a, 4, n - 5, 2, m - 3, 1d0, 'put/get inner patch')

  ! duplicate, copy, accumulate: B = A + sum_p (p + 1) A
  call chk_l(ga_duplicate(g_a, g_b, 'B'), 'ga_duplicate')
  call ga_fill(g_b, 7d0)
  call check_const(g_b, 7d0, 'ga_fill')
  call ga_copy(g_a, g_b)
  call check(g_b, 1, n, 1, m, 1d0, 'ga_copy')
  do j = 1, m
    do i = 1, n
      buf(i, j) = aval(i, j)
    end do
  end do
  alpha = me + 1
  call ga_sync()
  call ga_acc(g_b, 1, n, 1, m, buf, n + 3, alpha)
  call ga_sync()
  call check(g_b, 1, n, 1, m, 1d0 + np * (np + 1) / 2, 'ga_acc')

  ! scale, add, dot
  call chk_l(ga_duplicate(g_a, g_c, 'C'), 'ga_duplicate C')
  call ga_scale(g_b, 2d0)
  call ga_add(3d0, g_a, -1d0, g_b, g_c)
  ! C = 3A - 2(1 + np(np+1)/2) A
  call check(g_c, 1, n, 1, m, 3d0 - 2d0 * (1 + np * (np + 1) / 2), 'ga_scale/ga_add')
  ref = 0
  do j = 1, m
    do i = 1, n
      ref = ref + aval(i, j)**2
    end do
  end do
  dot = ga_ddot(g_a, g_a)
  call chk_d(dot, ref, 'ga_ddot')
  call ga_zero(g_c)
  call check_const(g_c, 0d0, 'ga_zero')

  call ga_sync()
  call chk_l(ga_destroy(g_c), 'ga_destroy C')
  call chk_l(ga_destroy(g_b), 'ga_destroy B')
  call chk_l(ga_destroy(g_a), 'ga_destroy A')
  call gat_end('f_basic')

contains

  ! Reads the patch and compares with scale * aval.
  subroutine check(g, i0, i1, j0, j1, scale, what)
    integer, intent(in) :: g, i0, i1, j0, j1
    double precision, intent(in) :: scale
    character(len=*), intent(in) :: what
    double precision :: got(n + 3, m)
    integer :: ii, jj, bad
    got = -999
    call ga_get(g, i0, i1, j0, j1, got, n + 3)
    bad = 0
    do jj = j0, j1
      do ii = i0, i1
        if (got(ii - i0 + 1, jj - j0 + 1) /= scale * aval(ii, jj)) then
          if (bad == 0) call chk_d(got(ii - i0 + 1, jj - j0 + 1), scale * aval(ii, jj), what)
          bad = bad + 1
        end if
      end do
    end do
    call chk_i(bad, 0, what // ' wrong elements')
  end subroutine check

  subroutine check_const(g, val, what)
    integer, intent(in) :: g
    double precision, intent(in) :: val
    character(len=*), intent(in) :: what
    double precision :: got(n, m)
    call ga_get(g, 1, n, 1, m, got, n)
    call chk_i(count(got /= val), 0, what // ' wrong elements')
  end subroutine check_const

end program f_basic

double precision function aval(i, j)
  implicit none
  integer, intent(in) :: i, j
  aval = mod(3 * i + 7 * j, 11) - 5
end function aval
