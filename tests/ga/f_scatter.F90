! GA suite, Fortran: scatter, gather and scatter-accumulate.
!
! n-d API: nga_scatter of this process's share of a permutation of all
! elements (so every process writes to every owner), nga_gather of another
! permutation, nga_scatter_acc from everybody onto overlapping elements
! (some twice within one call), on double and integer arrays. 2-D API:
! ga_scatter, ga_gather and ga_scatter_acc with separate row and column
! index vectors, which GA sorts by owner (ga_sort_scat / ga_sort_gath)
! before issuing ARMCI vector transfers. Values are small integers (the
! integer ones beyond 2^32) and every element is checked.
program f_scatter
  implicit none
#include "mafdecls.fh"
#include "global.fh"
#include "gavoid.fh"
  integer, parameter :: n = 13, m = 11, ne = n * m
  integer :: me, np, g_d, g_i, k, e, cnt, bad, times, q
  integer :: subs(2, ne), ii(ne), jj(ne), iv(ne), imat(n, m)
  double precision :: v(ne), mat(n, m), alpha

  call gat_begin()
  me = ga_nodeid()
  np = ga_nnodes()
  call chk_l(nga_create(MT_DBL, 2, [n, m], 'scatter d', [-1, -1], g_d), 'nga_create double')
  call chk_l(nga_create(MT_INT, 2, [n, m], 'scatter i', [-1, -1], g_i), 'nga_create integer')
  call ga_zero(g_d)
  call ga_zero(g_i)
  call ga_sync()

  ! my share of permutation e = 7k + 3 (mod ne): scatter
  cnt = 0
  do k = me, ne - 1, np
    e = mod(7 * k + 3, ne)
    cnt = cnt + 1
    subs(:, cnt) = [mod(e, n) + 1, e / n + 1]
    v(cnt) = dval(e)
    iv(cnt) = ival(e)
  end do
  call nga_scatter(g_d, v, subs, cnt)
  call nga_scatter(g_i, iv, subs, cnt)
  call ga_sync()
  ! gather my share of permutation e = 5k + 11
  cnt = 0
  do k = me, ne - 1, np
    e = mod(5 * k + 11, ne)
    cnt = cnt + 1
    subs(:, cnt) = [mod(e, n) + 1, e / n + 1]
  end do
  v = -999
  iv = -999
  call nga_gather(g_d, v, subs, cnt)
  call nga_gather(g_i, iv, subs, cnt)
  bad = 0
  do q = 1, cnt
    e = (subs(1, q) - 1) + (subs(2, q) - 1) * n
    if (v(q) /= dval(e) .or. iv(q) /= ival(e)) bad = bad + 1
  end do
  call chk_i(bad, 0, 'nga_scatter/nga_gather: wrong elements')
  call ga_sync()

  ! scatter-accumulate e = 3k mod 101, k < 2 ne / 3, alpha = me + 1
  call ga_zero(g_d)
  cnt = 2 * ne / 3
  do k = 0, cnt - 1
    e = mod(3 * k, 101)
    subs(:, k + 1) = [mod(e, n) + 1, e / n + 1]
    v(k + 1) = mod(e, 5) + 1
  end do
  alpha = me + 1
  call nga_scatter_acc(g_d, v, subs, cnt, alpha)
  call ga_sync()
  call nga_get(g_d, [1, 1], [n, m], mat, [n])
  bad = 0
  do e = 0, ne - 1
    times = count([(mod(3 * k, 101) == e, k = 0, cnt - 1)])
    if (mat(mod(e, n) + 1, e / n + 1) /= np * (np + 1) / 2 * times * (mod(e, 5) + 1)) bad = bad + 1
  end do
  call chk_i(bad, 0, 'nga_scatter_acc: wrong elements')
  call ga_sync()

  ! 2-D API on the integer array: the last process scatters the anti-diagonals
  call ga_zero(g_i)
  cnt = 0
  do k = 1, n
    if (k <= m) then
      cnt = cnt + 1
      ii(cnt) = k
      jj(cnt) = m + 1 - k
      iv(cnt) = k * 2_8**35 - 1
    end if
  end do
  if (me == np - 1) call ga_scatter(g_i, iv, ii, jj, cnt)
  call ga_sync()
  iv = 0
  call ga_gather(g_i, iv, ii, jj, cnt)
  bad = 0
  do q = 1, cnt
    if (iv(q) /= ii(q) * 2_8**35 - 1) bad = bad + 1
  end do
  call chk_i(bad, 0, 'ga_scatter/ga_gather: wrong elements')
  call ga_sync()
  do q = 1, cnt
    iv(q) = q
  end do
  call ga_scatter_acc(g_i, iv, ii, jj, cnt, 2)
  call ga_sync()
  call nga_get(g_i, [1, 1], [n, m], imat, [n])
  bad = 0
  do k = 1, m
    do e = 1, n
      if (e <= m .and. k == m + 1 - e) then
        if (imat(e, k) /= e * 2_8**35 - 1 + 2 * np * e) bad = bad + 1
      else if (imat(e, k) /= 0) then
        bad = bad + 1
      end if
    end do
  end do
  call chk_i(bad, 0, 'ga_scatter_acc: wrong elements')

  call ga_sync()
  call chk_l(ga_destroy(g_i), 'ga_destroy integer')
  call chk_l(ga_destroy(g_d), 'ga_destroy double')
  call gat_end('f_scatter')

contains

  double precision function dval(e)
    integer, intent(in) :: e
    dval = mod(e, 23) - 11
  end function dval

  integer function ival(e)
    integer, intent(in) :: e
    ival = (mod(e, 19) - 9) * 2_8**33 + e
  end function ival

end program f_scatter
