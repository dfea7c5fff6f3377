! GA suite, Fortran: selection, norms and median.
!
! nga_select_elem finds the largest or smallest element and its subscript
! through armci_msg_sel, to which GA's Fortran wrapper hands the CHARACTER
! op without a NUL: 'max' and 'min' are passed as literals and as
! substrings of a character variable ('maxmin...'). Double and integer
! arrays; the selected subscript must hold the selected value. Also
! ga_norm1 (GA 5.8: sum of |a_ij|, finished with a gop '+'),
! ga_norm_infinity (max |a_ij|, gop 'max') and ga_median (element-wise
! median of three arrays). Values are small integers: exact comparisons.
program f_select
  implicit none
#include "mafdecls.fh"
#include "global.fh"
#include "gavoid.fh"
  integer, parameter :: n = 13, m = 7
  character(len=16) :: opbuf
  integer :: me, np, g_d, g_i, g_b, g_c, g_m, i, j, sub(2), isub(1), ival, bad
  double precision :: dval, a(n, m), b(n, m), c(n, m), mm(n, m), nrm, e
  integer :: iv(n * m)
  double precision, external :: fa

  call gat_begin()
  me = ga_nodeid()
  np = ga_nnodes()
  opbuf = 'maxmin+absmax'

  do j = 1, m
    do i = 1, n
      a(i, j) = fa(i, j)
      b(i, j) = mod(i * j, 7) - 3
      c(i, j) = mod(2 * i + j, 5) - 2
    end do
  end do
  call chk_l(nga_create(MT_DBL, 2, [n, m], 'sel a', [-1, -1], g_d), 'nga_create a')
  call chk_l(ga_duplicate(g_d, g_b, 'sel b'), 'ga_duplicate b')
  call chk_l(ga_duplicate(g_d, g_c, 'sel c'), 'ga_duplicate c')
  call chk_l(ga_duplicate(g_d, g_m, 'sel m'), 'ga_duplicate m')
  if (me == 0) then
    call nga_put(g_d, [1, 1], [n, m], a, [n])
    call nga_put(g_b, [1, 1], [n, m], b, [n])
    call nga_put(g_c, [1, 1], [n, m], c, [n])
  end if
  call ga_sync()

  call nga_select_elem(g_d, 'max', dval, sub)
  call check_sel(dval, sub, maxval(a), 'nga_select_elem max (literal)')
  call nga_select_elem(g_d, 'min', dval, sub)
  call check_sel(dval, sub, minval(a), 'nga_select_elem min (literal)')
  call nga_select_elem(g_d, opbuf(1:3), dval, sub)
  call check_sel(dval, sub, maxval(a), 'nga_select_elem max (substring)')
  call nga_select_elem(g_d, opbuf(4:6), dval, sub)
  call check_sel(dval, sub, minval(a), 'nga_select_elem min (substring)')

  ! integer vector, unique extremes at known places
  do i = 1, n * m
    iv(i) = mod(i * 37, n * m) - 40
  end do
  call chk_l(nga_create(MT_INT, 1, [n * m], 'sel int', [-1], g_i), 'nga_create int')
  if (me == np - 1) call nga_put(g_i, [1], [n * m], iv, [1])
  call ga_sync()
  call nga_select_elem(g_i, opbuf(1:3), ival, isub)
  call chk_i(ival, maxval(iv), 'integer select max value')
  call chk_i(isub(1), maxloc(iv, 1), 'integer select max subscript')
  call nga_select_elem(g_i, opbuf(4:6), ival, isub)
  call chk_i(ival, minval(iv), 'integer select min value')
  call chk_i(isub(1), minloc(iv, 1), 'integer select min subscript')

  ! norms of a
  call ga_norm1(g_d, nrm)
  call chk_d(nrm, sum(abs(a)), 'ga_norm1')
  call ga_norm_infinity(g_d, nrm)
  call chk_d(nrm, maxval(abs(a)), 'ga_norm_infinity')

  ! median of a, b, c
  call ga_median(g_d, g_b, g_c, g_m)
  call nga_get(g_m, [1, 1], [n, m], mm, [n])
  bad = 0
  do j = 1, m
    do i = 1, n
      e = a(i, j) + b(i, j) + c(i, j) - max(a(i, j), b(i, j), c(i, j)) &
          - min(a(i, j), b(i, j), c(i, j))
      if (mm(i, j) /= e) bad = bad + 1
    end do
  end do
  call chk_i(bad, 0, 'ga_median: wrong elements')

  call ga_sync()
  call chk_l(ga_destroy(g_i), 'ga_destroy int')
  call chk_l(ga_destroy(g_m), 'ga_destroy m')
  call chk_l(ga_destroy(g_c), 'ga_destroy c')
  call chk_l(ga_destroy(g_b), 'ga_destroy b')
  call chk_l(ga_destroy(g_d), 'ga_destroy a')
  call gat_end('f_select')

contains

  subroutine check_sel(got, s, want, what)
    double precision, intent(in) :: got, want
    integer, intent(in) :: s(2)
    character(len=*), intent(in) :: what
    call chk_d(got, want, what // ' value')
    call chk_l(s(1) >= 1 .and. s(1) <= n .and. s(2) >= 1 .and. s(2) <= m, what // ' subscript range')
    if (s(1) >= 1 .and. s(1) <= n .and. s(2) >= 1 .and. s(2) <= m) &
      call chk_d(a(s(1), s(2)), want, what // ' element at the subscript')
  end subroutine check_sel

end program f_select

double precision function fa(i, j)
  implicit none
  integer, intent(in) :: i, j
  fa = mod(5 * i + 3 * j, 13) - 6 + merge(20, 0, i == 4 .and. j == 6) - merge(30, 0, i == 11 .and. j == 2)
end function fa
