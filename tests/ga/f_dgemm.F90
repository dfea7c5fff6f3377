! GA suite, Fortran: matrix multiplication, transpose and symmetrize.
!
! ga_dgemm with every combination of transa/transb, given as upper and
! lower case CHARACTER constants (GA looks at the first character only),
! on non-square matrices; ga_matmul_patch (2-D API) and nga_matmul_patch
! on sub-patches that leave the rest of C untouched; ga_transpose of a
! non-square array; ga_symmetrize of a matrix with even entries so that
! (A + A^T) / 2 is exact. GA's multiplications fetch blocks of A and B
! from their owners and accumulate into C; entries are small integers, so
! every result is compared exactly with a local computation.
program f_dgemm
  implicit none
#include "mafdecls.fh"
#include "global.fh"
  integer, parameter :: mm = 13, nn = 9, kk = 11
  integer :: me, np, ta, tb, g_a, g_b, g_c, g_t, g_s, i, j, l, ar, ac, br, bc, bad
  character :: tr(2, 2)
  double precision :: a(kk + 2, kk + 2), b(kk + 2, kk + 2), c(mm, nn), w(mm, nn), s
  double precision :: t(nn + 4, mm + 4), sm(mm, mm)
  double precision, external :: aval, bval

  call gat_begin()
  me = ga_nodeid()
  np = ga_nnodes()
  tr = reshape(['n', 'N', 't', 'T'], [2, 2])

  do ta = 1, 2
    do tb = 1, 2
      ! op(A) is mm x kk, op(B) is kk x nn
      ar = merge(mm, kk, ta == 1)
      ac = merge(kk, mm, ta == 1)
      br = merge(kk, nn, tb == 1)
      bc = merge(nn, kk, tb == 1)
      call chk_l(ga_create(MT_DBL, ar, ac, 'a', 0, 0, g_a), 'ga_create a')
      call chk_l(ga_create(MT_DBL, br, bc, 'b', 0, 0, g_b), 'ga_create b')
      call chk_l(ga_create(MT_DBL, mm, nn, 'c', 0, 0, g_c), 'ga_create c')
      if (me == 0) then
        do j = 1, ac
          do i = 1, ar
            a(i, j) = aval(i, j)
          end do
        end do
        do j = 1, bc
          do i = 1, br
            b(i, j) = bval(i, j)
          end do
        end do
        call ga_put(g_a, 1, ar, 1, ac, a, kk + 2)
        call ga_put(g_b, 1, br, 1, bc, b, kk + 2)
      end if
      call ga_fill(g_c, 1d0)
      call ga_sync()
      ! alternate upper and lower case
      call ga_dgemm(tr(1 + mod(ta + tb, 2), ta), tr(1 + mod(ta, 2), tb), mm, nn, kk, 2d0, g_a, &
                    g_b, -1d0, g_c)
      call ga_get(g_c, 1, mm, 1, nn, c, mm)
      bad = 0
      do j = 1, nn
        do i = 1, mm
          s = 0
          do l = 1, kk
            s = s + merge(aval(i, l), aval(l, i), ta == 1) * merge(bval(l, j), bval(j, l), tb == 1)
          end do
          if (c(i, j) /= 2 * s - 1) bad = bad + 1
        end do
      end do
      call chk_i(bad, 0, 'ga_dgemm ' // tr(1, ta) // tr(1, tb) // ': wrong elements')
      call ga_sync()
      call chk_l(ga_destroy(g_c), 'ga_destroy c')
      call chk_l(ga_destroy(g_b), 'ga_destroy b')
      call chk_l(ga_destroy(g_a), 'ga_destroy a')
    end do
  end do

  ! patches: C(3:8, 2:6) = A(2:7, 4:7) * B(1:4, 3:7) + C, elsewhere C = -1
  call chk_l(ga_create(MT_DBL, kk, kk, 'pa', 0, 0, g_a), 'ga_create pa')
  call chk_l(ga_create(MT_DBL, kk, kk, 'pb', 0, 0, g_b), 'ga_create pb')
  call chk_l(ga_create(MT_DBL, mm, nn, 'pc', 0, 0, g_c), 'ga_create pc')
  if (me == np - 1) then
    do j = 1, kk
      do i = 1, kk
        a(i, j) = aval(i, j)
        b(i, j) = bval(i, j)
      end do
    end do
    call ga_put(g_a, 1, kk, 1, kk, a, kk + 2)
    call ga_put(g_b, 1, kk, 1, kk, b, kk + 2)
  end if
  call ga_fill(g_c, -1d0)
  call ga_sync()
  call ga_matmul_patch('n', 'n', 1d0, 1d0, g_a, 2, 7, 4, 7, g_b, 1, 4, 3, 7, g_c, 3, 8, 2, 6)
  w = -1
  do j = 2, 6
    do i = 3, 8
      s = 0
      do l = 1, 4
        s = s + aval(i - 1, 3 + l) * bval(l, j + 1)
      end do
      w(i, j) = s - 1
    end do
  end do
  call ga_get(g_c, 1, mm, 1, nn, c, mm)
  call chk_i(count(c /= w), 0, 'ga_matmul_patch: wrong elements')
  ! the same with the n-d API and B transposed: C(1:4, 7:9) = A(1:4, 1:5) B(2:4, 6:10)^T.
  ! GA takes the patch of a transposed operand in op(B)'s coordinates: B^T(6:10, 2:4)
  call ga_sync()
  call nga_matmul_patch('N', 'T', 1d0, 0d0, g_a, [1, 1], [4, 5], g_b, [6, 2], [10, 4], g_c, &
                        [1, 7], [4, 9])
  do j = 7, 9
    do i = 1, 4
      s = 0
      do l = 1, 5
        s = s + aval(i, l) * bval(j - 5, 5 + l)
      end do
      w(i, j) = s
    end do
  end do
  call ga_get(g_c, 1, mm, 1, nn, c, mm)
  call chk_i(count(c /= w), 0, 'nga_matmul_patch: wrong elements')
  call ga_sync()

  ! transpose of the mm x nn C
  call chk_l(ga_create(MT_DBL, nn, mm, 't', 0, 0, g_t), 'ga_create t')
  call ga_transpose(g_c, g_t)
  call ga_get(g_t, 1, nn, 1, mm, t, nn + 4)
  call chk_i(count(t(1:nn, 1:mm) /= transpose(w)), 0, 'ga_transpose: wrong elements')

  ! symmetrize
  call chk_l(ga_create(MT_DBL, mm, mm, 's', 0, 0, g_s), 'ga_create s')
  do j = 1, mm
    do i = 1, mm
      sm(i, j) = 2 * aval(i, j) + 4 * i
    end do
  end do
  if (me == 0) call ga_put(g_s, 1, mm, 1, mm, sm, mm)
  call ga_sync()
  call ga_symmetrize(g_s)
  call ga_get(g_s, 1, mm, 1, mm, sm, mm)
  bad = 0
  do j = 1, mm
    do i = 1, mm
      if (sm(i, j) /= (2 * aval(i, j) + 4 * i + 2 * aval(j, i) + 4 * j) / 2) bad = bad + 1
    end do
  end do
  call chk_i(bad, 0, 'ga_symmetrize: wrong elements')

  call ga_sync()
  call chk_l(ga_destroy(g_s), 'ga_destroy s')
  call chk_l(ga_destroy(g_t), 'ga_destroy t')
  call chk_l(ga_destroy(g_c), 'ga_destroy pc')
  call chk_l(ga_destroy(g_b), 'ga_destroy pb')
  call chk_l(ga_destroy(g_a), 'ga_destroy pa')
  call gat_end('f_dgemm')
end program f_dgemm

double precision function aval(i, j)
  implicit none
  integer, intent(in) :: i, j
  aval = mod(3 * i + 7 * j, 11) - 5
end function aval

double precision function bval(i, j)
  implicit none
  integer, intent(in) :: i, j
  bval = mod(2 * i + 5 * j, 7) - 3
end function bval
