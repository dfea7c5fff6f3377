! GA suite, Fortran: atomic counters, mutexes, fences, non-blocking calls.
!
! nga_read_inc on one integer counter per process (GA's 8-byte integer:
! ARMCI_FETCH_AND_ADD_LONG), each process drawing from every counter: all
! tickets must be distinct (histograms summed with ga_igop) and the
! counters must end at the total. ga_create_mutexes / ga_lock / ga_unlock
! protect a get-increment-put on shared counters, with ga_init_fence /
! ga_fence so each put is complete before the unlock: no update may be
! lost. Non-blocking: ga_nbput (2-D API) and nga_nbput of pieces into
! another process's block, several nga_nbget outstanding at once completed
! by nga_nbwait or polled with nga_nbtest, and nga_nbacc from everybody.
program f_lock
  implicit none
#include "mafdecls.fh"
#include "global.fh"
#include "gavoid.fh"
  integer, parameter :: tickets = 20, rounds = 10, nmutex = 2, n = 16, m = 12
  integer :: me, np, g_c, g_l, g_a, c, t, got, total, k, r, i, j, q, bad
  integer :: hist(4 * 4 * tickets), counters(4), lv(nmutex), h(4)
  integer :: first, last, spins
  double precision :: a(n, m), w(n, m), two
  double precision, external :: nbval

  call gat_begin()
  me = ga_nodeid()
  np = ga_nnodes()

  ! read-increment: counter c gets tickets increments from every process
  total = np * tickets
  call chk_l(nga_create(MT_INT, 1, [np], 'counters', [-1], g_c), 'nga_create counters')
  call ga_zero(g_c)
  call ga_sync()
  hist = 0
  do t = 0, tickets * np - 1
    c = mod(me + t, np)
    got = nga_read_inc(g_c, [c + 1], 1)
    if (got >= 0 .and. got < total) then
      hist(c * total + got + 1) = hist(c * total + got + 1) + 1
    else
      call chk_i(got, 0, 'nga_read_inc returned a value out of range')
    end if
  end do
  call ga_igop(MT_INT, hist, np * total, '+')
  call chk_i(count(hist(1:np * total) /= 1), 0, 'tickets not drawn exactly once')
  call ga_sync()
  call nga_get(g_c, [1], [np], counters, [1])
  do c = 1, np
    call chk_i(counters(c), total, 'final counter value')
  end do

  ! mutexes around get-increment-put
  call chk_l(nga_create(MT_INT, 1, [nmutex], 'locked', [-1], g_l), 'nga_create locked')
  call ga_zero(g_l)
  call chk_l(ga_create_mutexes(nmutex), 'ga_create_mutexes')
  call ga_sync()
  do r = 1, rounds
    do k = 0, nmutex - 1
      call ga_lock(k)
      call ga_init_fence()
      call nga_get(g_l, [k + 1], [k + 1], lv, [1])
      lv(1) = lv(1) + 1
      call nga_put(g_l, [k + 1], [k + 1], lv, [1])
      call ga_fence()
      call ga_unlock(k)
    end do
  end do
  call ga_sync()
  call nga_get(g_l, [1], [nmutex], lv, [1])
  do k = 1, nmutex
    call chk_i(lv(k), rounds * np, 'counter under a mutex')
  end do
  call chk_l(ga_destroy_mutexes(), 'ga_destroy_mutexes')

  ! non-blocking: the next process's column band, in 2 x 2 pieces
  call chk_l(nga_create(MT_DBL, 2, [n, m], 'nb', [-1, -1], g_a), 'nga_create nb')
  call ga_zero(g_a)
  do j = 1, m
    do i = 1, n
      a(i, j) = nbval(i, j)
    end do
  end do
  c = mod(me + 1, np)
  first = m * c / np + 1
  last = m * (c + 1) / np
  if (first <= last) then
    call ga_nbput(g_a, 1, n / 2, first, last, a(1, first), n, h(1))
    call nga_nbput(g_a, [n / 2 + 1, first], [n, last], a(n / 2 + 1, first), [n], h(2))
    call nga_nbwait(h(2))
    call ga_nbwait(h(1))
  end if
  call ga_sync()
  w = -1
  do q = 1, 4
    call nga_nbget(g_a, [(q - 1) * n / 4 + 1, 1], [q * n / 4, m], w((q - 1) * n / 4 + 1, 1), [n], &
                   h(q))
  end do
  call nga_nbwait(h(3))
  call nga_nbwait(h(1))
  spins = 0
  do while (nga_nbtest(h(2)) == 0 .and. spins < 100000000)
    spins = spins + 1
  end do
  call chk_l(spins < 100000000, 'nga_nbtest never reported completion')
  call nga_nbwait(h(4))
  call chk_i(count(w /= a), 0, 'ga_nbput/nga_nbput/nga_nbget: wrong elements')
  call ga_sync()
  two = 2
  call nga_nbacc(g_a, [1, 1], [n, m / 2], a, [n], two, h(1))
  call nga_nbacc(g_a, [1, m / 2 + 1], [n, m], a(1, m / 2 + 1), [n], two, h(2))
  call nga_nbwait(h(2))
  call nga_nbwait(h(1))
  call ga_sync()
  call nga_get(g_a, [1, 1], [n, m], w, [n])
  bad = count(w /= (1 + 2 * np) * a)
  call chk_i(bad, 0, 'nga_nbacc: wrong elements')

  call ga_sync()
  call chk_l(ga_destroy(g_a), 'ga_destroy nb')
  call chk_l(ga_destroy(g_l), 'ga_destroy locked')
  call chk_l(ga_destroy(g_c), 'ga_destroy counters')
  call gat_end('f_lock')
end program f_lock

double precision function nbval(i, j)
  implicit none
  integer, intent(in) :: i, j
  nbval = mod(5 * i + 3 * j, 17) - 8
end function nbval
