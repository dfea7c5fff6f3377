! GA suite, Fortran: element-wise operations and patch algebra.
!
! ga_elem_multiply / _divide / _maximum / _minimum, ga_abs_value,
! ga_add_constant, ga_recip, ga_elem_multiply_patch and
! ga_abs_value_patch on double arrays; nga_copy_patch plain and transposed
! ('n' / 't' as CHARACTER constants), nga_fill_patch, nga_zero_patch,
! nga_scale_patch, nga_add_patch and nga_ddot_patch on patches at
! different positions of arrays with different shapes. Divisors and
! reciprocals are powers of two and all other values small integers, so
! every result is exact; each is compared with the same computation done
! on a local copy.
program f_elem
  implicit none
#include "mafdecls.fh"
#include "global.fh"
  integer, parameter :: n = 12, m = 9
  integer :: me, np, g_a, g_b, g_c, g_m, g_p, g_q, i, j
  double precision :: a(n, m), b(n, m), c(n, m), w(n, m), got(n, m), dot, ref
  double precision :: wp(m + 3, n + 2), q(m + 3, n + 2)

  call gat_begin()
  me = ga_nodeid()
  np = ga_nnodes()
  do j = 1, m
    do i = 1, n
      a(i, j) = mod(5 * i + 3 * j, 13) - 6
      b(i, j) = 2d0**(mod(i + 2 * j, 7) - 3) * merge(1, -1, mod(i * j, 3) == 0)
      c(i, j) = mod(i * j, 7) - 3
    end do
  end do
  call chk_l(nga_create(MT_DBL, 2, [n, m], 'a', [-1, -1], g_a), 'nga_create a')
  call chk_l(ga_duplicate(g_a, g_b, 'b'), 'ga_duplicate b')
  call chk_l(ga_duplicate(g_a, g_c, 'c'), 'ga_duplicate c')
  call chk_l(ga_duplicate(g_a, g_m, 'm'), 'ga_duplicate m')
  if (me == 0) then
    call nga_put(g_a, [1, 1], [n, m], a, [n])
    call nga_put(g_b, [1, 1], [n, m], b, [n])
    call nga_put(g_c, [1, 1], [n, m], c, [n])
  end if
  call ga_sync()

  call ga_elem_multiply(g_a, g_b, g_m)
  call expect(g_m, a * b, 'ga_elem_multiply')
  call ga_elem_divide(g_a, g_b, g_m)
  call expect(g_m, a / b, 'ga_elem_divide')
  call ga_elem_maximum(g_a, g_c, g_m)
  call expect(g_m, max(a, c), 'ga_elem_maximum')
  call ga_elem_minimum(g_a, g_c, g_m)
  call expect(g_m, min(a, c), 'ga_elem_minimum')
  w = min(a, c)
  call ga_elem_multiply_patch(g_a, [3, 2], [9, 7], g_b, [3, 2], [9, 7], g_m, [3, 2], [9, 7])
  w(3:9, 2:7) = a(3:9, 2:7) * b(3:9, 2:7)
  call expect(g_m, w, 'ga_elem_multiply_patch')

  call ga_copy(g_a, g_m)
  call ga_abs_value(g_m)
  call expect(g_m, abs(a), 'ga_abs_value')
  call ga_add_constant(g_m, -1.5d0)
  call expect(g_m, abs(a) - 1.5d0, 'ga_add_constant')
  call ga_copy(g_b, g_m)
  call ga_recip(g_m)
  call expect(g_m, 1 / b, 'ga_recip')
  call ga_copy(g_a, g_m)
  call ga_abs_value_patch(g_m, [1, 4], [n, 6])
  w = a
  w(:, 4:6) = abs(a(:, 4:6))
  call expect(g_m, w, 'ga_abs_value_patch')

  ! patches between arrays of other shapes: P is (m+3) x (n+2), Q too
  call chk_l(nga_create(MT_DBL, 2, [m + 3, n + 2], 'p', [2, -1], g_p), 'nga_create p')
  call chk_l(nga_create(MT_DBL, 2, [m + 3, n + 2], 'q', [-1, 3], g_q), 'nga_create q')
  call ga_zero(g_p)
  call ga_zero(g_q)
  ! P(2:10, 3:14) = A(1:12, 1:9)^T
  call nga_copy_patch('t', g_a, [1, 1], [n, m], g_p, [2, 3], [m + 1, n + 2])
  wp = 0
  wp(2:m + 1, 3:n + 2) = transpose(a)
  call expect_p(g_p, wp, 'nga_copy_patch transposed')
  ! Q(4:12, 1:5) = P(2:10, 10:14)
  call nga_copy_patch('n', g_p, [2, 10], [m + 1, n + 2], g_q, [4, 1], [m + 3, 5])
  q = 0
  q(4:m + 3, 1:5) = wp(2:m + 1, 10:n + 2)
  call expect_p(g_q, q, 'nga_copy_patch')
  call nga_fill_patch(g_q, [1, 8], [3, n + 2], 7d0)
  q(1:3, 8:n + 2) = 7
  call nga_zero_patch(g_q, [5, 2], [6, 3])
  q(5:6, 2:3) = 0
  call nga_scale_patch(g_q, [2, 1], [m + 3, 4], -2d0)
  q(2:m + 3, 1:4) = -2 * q(2:m + 3, 1:4)
  call expect_p(g_q, q, 'nga_fill/zero/scale_patch')
  ! P(1:6, 1:7) = 3 P(4:9, 8:14) - Q(7:12, 1:7)
  call nga_add_patch(3d0, g_p, [4, 8], [9, n + 2], -1d0, g_q, [7, 1], [m + 3, 7], g_p, [1, 1], [6, 7])
  wp(1:6, 1:7) = 3 * wp(4:9, 8:n + 2) - q(7:m + 3, 1:7)
  call expect_p(g_p, wp, 'nga_add_patch')
  dot = nga_ddot_patch(g_p, 'n', [1, 2], [m, n], g_q, 'n', [3, 3], [m + 2, n + 1])
  ref = sum(wp(1:m, 2:n) * q(3:m + 2, 3:n + 1))
  call chk_d(dot, ref, 'nga_ddot_patch')

  call ga_sync()
  call chk_l(ga_destroy(g_q), 'ga_destroy q')
  call chk_l(ga_destroy(g_p), 'ga_destroy p')
  call chk_l(ga_destroy(g_m), 'ga_destroy m')
  call chk_l(ga_destroy(g_c), 'ga_destroy c')
  call chk_l(ga_destroy(g_b), 'ga_destroy b')
  call chk_l(ga_destroy(g_a), 'ga_destroy a')
  call gat_end('f_elem')

contains

  subroutine expect(g, want, what)
    integer, intent(in) :: g
    double precision, intent(in) :: want(n, m)
    character(len=*), intent(in) :: what
    call nga_get(g, [1, 1], [n, m], got, [n])
    call chk_i(count(got /= want), 0, what // ': wrong elements')
    call ga_sync()
  end subroutine expect

  subroutine expect_p(g, want, what)
    integer, intent(in) :: g
    double precision, intent(in) :: want(m + 3, n + 2)
    character(len=*), intent(in) :: what
    double precision :: gp(m + 3, n + 2)
    call nga_get(g, [1, 1], [m + 3, n + 2], gp, [m + 3])
    call chk_i(count(gp /= want), 0, what // ': wrong elements')
    call ga_sync()
  end subroutine expect_p

end program f_elem
