! GA suite, Fortran: GA's ScaLAPACK interfaces.
!
! ga_lu_solve with trans 'n' and 't' on a non-symmetric diagonally
! dominant matrix, ga_llt_solve and ga_solve on a symmetric positive
! definite one, ga_spd_invert, and the ScaLAPACK eigensolvers ga_pdsyev
! (standard) and ga_pdsygv (generalized, metric 2 I). GA redistributes the
! arrays to and from ScaLAPACK's block-cyclic layout with one-sided
! transfers between all processes. Right-hand sides are built from chosen
! integer solutions; the eigenproblem is the (-1, 2, -1) tridiagonal matrix
! with eigenvalues 2 - 2 cos(k pi / (n + 1)). Rounding depends on the
! process grid, so these checks use a relative tolerance of 1e-9 (the only
! ones in the suite that do).
program f_linalg
  implicit none
#include "mafdecls.fh"
#include "global.fh"
  integer, parameter :: n = 20, nrhs = 3
  double precision, parameter :: tol = 1d-9
  integer :: me, np, g_a, g_b, g_v, g_s, i, j, k, rc, t
  double precision :: a(n, n), s(n, n), b(n, nrhs), x(n, nrhs), inv(n, n), v(n, n)
  double precision :: eval(n), pi, resid, nrm

  call gat_begin()
  me = ga_nodeid()
  np = ga_nnodes()
  call chk_l(ga_create(MT_DBL, n, n, 'A', 0, 0, g_a), 'ga_create A')
  call chk_l(ga_create(MT_DBL, n, nrhs, 'B', 0, 0, g_b), 'ga_create B')
  do k = 1, nrhs
    do i = 1, n
      x(i, k) = mod(k + 2 * i, 9) - 4
    end do
  end do

  ! LU: 'n' solves A x = b, 't' solves A^T x = b
  do j = 1, n
    do i = 1, n
      a(i, j) = merge(30d0 + i, dble(mod(3 * i + 5 * j, 7) - 3), i == j)
    end do
  end do
  do t = 1, 2
    if (t == 1) then
      b = matmul(a, x)
    else
      b = matmul(transpose(a), x)
    end if
    call put_both(a, b)
    if (t == 1) then
      call ga_lu_solve('n', g_a, g_b)
    else
      call ga_lu_solve('t', g_a, g_b)
    end if
    call check_x(merge('ga_lu_solve n', 'ga_lu_solve t', t == 1))
  end do

  ! symmetric positive definite
  do j = 1, n
    do i = 1, n
      a(i, j) = merge(4d0 * n, dble(mod(i + j, 5) - 2), i == j)
    end do
  end do
  b = matmul(a, x)
  call put_both(a, b)
  rc = ga_llt_solve(g_a, g_b)
  call chk_i(rc, 0, 'ga_llt_solve return')
  call check_x('ga_llt_solve')
  call put_both(a, b)
  rc = ga_solve(g_a, g_b)
  call chk_i(rc, 0, 'ga_solve return')
  call check_x('ga_solve')
  call put_both(a, b)
  rc = ga_spd_invert(g_a)
  call chk_i(rc, 0, 'ga_spd_invert return')
  call ga_get(g_a, 1, n, 1, n, inv, n)
  inv = matmul(inv, a)
  do j = 1, n
    do i = 1, n
      call chk_near(inv(i, j), merge(1d0, 0d0, i == j), tol, 'ga_spd_invert: inv(A) A')
    end do
  end do
  call ga_sync()

  ! eigenproblems
  call chk_l(ga_create(MT_DBL, n, n, 'V', 0, 0, g_v), 'ga_create V')
  call chk_l(ga_create(MT_DBL, n, n, 'S', 0, 0, g_s), 'ga_create S')
  do j = 1, n
    do i = 1, n
      a(i, j) = merge(2d0, merge(-1d0, 0d0, abs(i - j) == 1), i == j)
      s(i, j) = merge(2d0, 0d0, i == j)
    end do
  end do
  pi = acos(-1d0)
  if (me == 0) call ga_put(g_a, 1, n, 1, n, a, n)
  call ga_zero(g_v)
  call ga_sync()
  call ga_pdsyev(g_a, g_v, eval, 0)
  call check_eigen(1d0, 'ga_pdsyev')
  if (me == 0) then
    call ga_put(g_a, 1, n, 1, n, a, n)
    call ga_put(g_s, 1, n, 1, n, s, n)
  end if
  call ga_zero(g_v)
  call ga_sync()
  call ga_pdsygv(g_a, g_s, g_v, eval)
  call check_eigen(0.5d0, 'ga_pdsygv')

  call ga_sync()
  call chk_l(ga_destroy(g_s), 'ga_destroy S')
  call chk_l(ga_destroy(g_v), 'ga_destroy V')
  call chk_l(ga_destroy(g_b), 'ga_destroy B')
  call chk_l(ga_destroy(g_a), 'ga_destroy A')
  call gat_end('f_linalg')

contains

  subroutine put_both(am, bm)
    double precision, intent(in) :: am(n, n), bm(n, nrhs)
    call ga_sync()
    if (me == np - 1) then
      call ga_put(g_a, 1, n, 1, n, am, n)
      call ga_put(g_b, 1, n, 1, nrhs, bm, n)
    end if
    call ga_sync()
  end subroutine put_both

  subroutine check_x(what)
    character(len=*), intent(in) :: what
    double precision :: got(n, nrhs)
    integer :: ii, kk, bad
    call ga_sync()
    call ga_get(g_b, 1, n, 1, nrhs, got, n)
    bad = 0
    do kk = 1, nrhs
      do ii = 1, n
        if (.not. (abs(got(ii, kk) - x(ii, kk)) <= tol * max(1d0, abs(x(ii, kk))))) then
          if (bad == 0) call chk_near(got(ii, kk), x(ii, kk), tol, what)
          bad = bad + 1
        end if
      end do
    end do
    call chk_i(bad, 0, what // ': wrong solution elements')
    call ga_sync()
  end subroutine check_x

  ! eigenvalues (ascending) = scale * (2 - 2 cos(k pi / (n + 1))), and
  ! A v_k = (eval_k / scale) v_k for every eigenvector column of V
  subroutine check_eigen(scale, what)
    double precision, intent(in) :: scale
    character(len=*), intent(in) :: what
    integer :: kk
    do kk = 1, n
      call chk_near(eval(kk), scale * (2 - 2 * cos(kk * pi / (n + 1))), tol, what // ' eigenvalue')
    end do
    call ga_get(g_v, 1, n, 1, n, v, n)
    do kk = 1, n
      resid = maxval(abs(matmul(a, v(:, kk)) - eval(kk) / scale * v(:, kk)))
      nrm = maxval(abs(v(:, kk)))
      call chk_l(nrm > 0 .and. resid <= 1d-8 * nrm, what // ' eigenvector residual')
    end do
    call ga_sync()
  end subroutine check_eigen

end program f_linalg
