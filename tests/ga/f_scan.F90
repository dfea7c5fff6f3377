! GA suite, Fortran: enumerate, segmented scans, pack and unpack.
!
! ga_patch_enum fills a patch of an integer and of a double vector with
! start + k * stride; ga_scan_add (inclusive and exclusive) and
! ga_scan_copy work on segments that an integer mask starts, with
! segments that cross process boundaries (GA reconciles them with
! gathers, locates and gops); ga_pack compresses the masked elements into
! a dense vector and returns their count, ga_unpack spreads them back. The
! vectors are 1-based, as the Fortran API is. The expected results are the
! same operations done sequentially on local arrays.
program f_scan
  implicit none
#include "mafdecls.fh"
#include "global.fh"
#include "gavoid.fh"
  integer, parameter :: l = 47
  integer :: me, np, g_src, g_dst, g_msk, g_i, g_pk, i, k, excl, cnt, nstart
  integer :: msk(l), iv(l)
  double precision :: src(l), got(l), want(l), s

  call gat_begin()
  me = ga_nodeid()
  np = ga_nnodes()
  do i = 1, l
    src(i) = mod(i, 9) - 3
    msk(i) = 0
    if (i == 1 .or. mod(i, 6) == 0 .or. i == 13 .or. i == 14 .or. i == l) msk(i) = 1 + mod(i, 3)
  end do
  nstart = count(msk /= 0)

  ! enumerate
  call chk_l(nga_create(MT_INT, 1, [l], 'enum', [-1], g_i), 'nga_create enum')
  call ga_zero(g_i)
  call ga_patch_enum(g_i, 4, l - 3, 2_8**34, -3)
  call ga_sync()
  call nga_get(g_i, [1], [l], iv, [1])
  do i = 1, l
    if (i >= 4 .and. i <= l - 3) then
      call chk_i(iv(i), 2_8**34 - 3 * (i - 4), 'ga_patch_enum integer')
    else
      call chk_i(iv(i), 0, 'ga_patch_enum integer outside the patch')
    end if
  end do

  call chk_l(nga_create(MT_DBL, 1, [l], 'src', [-1], g_src), 'nga_create src')
  call chk_l(ga_duplicate(g_src, g_dst, 'dst'), 'ga_duplicate dst')
  call chk_l(ga_duplicate(g_src, g_pk, 'packed'), 'ga_duplicate packed')
  call chk_l(nga_create(MT_INT, 1, [l], 'mask', [-1], g_msk), 'nga_create mask')
  call ga_zero(g_dst)
  call ga_patch_enum(g_dst, 1, l, 0.5d0, 0.25d0)
  call ga_sync()
  call nga_get(g_dst, [1], [l], got, [1])
  call chk_i(count(got /= [(0.5d0 + 0.25d0 * (i - 1), i = 1, l)]), 0, 'ga_patch_enum double')
  if (me == 0) then
    call nga_put(g_src, [1], [l], src, [1])
    call nga_put(g_msk, [1], [l], msk, [1])
  end if
  call ga_sync()

  do excl = 0, 1
    call ga_zero(g_dst)
    call ga_scan_add(g_src, g_dst, g_msk, 1, l, excl)
    call ga_sync()
    call nga_get(g_dst, [1], [l], got, [1])
    s = 0
    do i = 1, l
      if (msk(i) /= 0) s = 0
      want(i) = s + merge(0d0, src(i), excl == 1)
      s = s + src(i)
    end do
    call chk_i(count(got /= want), 0, merge('ga_scan_add exclusive', 'ga_scan_add inclusive', &
                                           excl == 1) // ': wrong elements')
  end do

  call ga_zero(g_dst)
  call ga_scan_copy(g_src, g_dst, g_msk, 1, l)
  call ga_sync()
  call nga_get(g_dst, [1], [l], got, [1])
  do i = 1, l
    if (msk(i) /= 0) s = src(i)
    want(i) = s
  end do
  call chk_i(count(got /= want), 0, 'ga_scan_copy: wrong elements')

  call ga_zero(g_pk)
  cnt = -1
  call ga_pack(g_src, g_pk, g_msk, 1, l, cnt)
  call ga_sync()
  call chk_i(cnt, nstart, 'ga_pack count')
  call nga_get(g_pk, [1], [l], got, [1])
  want = 0
  k = 0
  do i = 1, l
    if (msk(i) /= 0) then
      k = k + 1
      want(k) = src(i)
    end if
  end do
  call chk_i(count(got /= want), 0, 'ga_pack: wrong elements')
  call ga_zero(g_dst)
  cnt = -1
  call ga_unpack(g_pk, g_dst, g_msk, 1, l, cnt)
  call ga_sync()
  call chk_i(cnt, nstart, 'ga_unpack count')
  call nga_get(g_dst, [1], [l], got, [1])
  call chk_i(count(got /= merge(src, 0d0, msk /= 0)), 0, 'ga_unpack: wrong elements')

  call ga_sync()
  call chk_l(ga_destroy(g_msk), 'ga_destroy mask')
  call chk_l(ga_destroy(g_pk), 'ga_destroy packed')
  call chk_l(ga_destroy(g_dst), 'ga_destroy dst')
  call chk_l(ga_destroy(g_src), 'ga_destroy src')
  call chk_l(ga_destroy(g_i), 'ga_destroy enum')
  call gat_end('f_scan')
end program f_scan
