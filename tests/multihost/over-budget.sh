# over_budget SECONDS LIMIT: why a VM case that passed fails all the same, or nothing (sourced
# by cases.sh; tests/core/test_time_budget.sh checks it). The time budget of the whole suite
# (scripts/time-budget.py) holds for each case too: a case that took more than half of its
# limit is living near it, and fails on the next busy machine.
over_budget() {
    [ $(($1 * 2)) -le "$2" ] || echo "took $1 s, over 50 % of its ${2} s limit (the time budget)"
}
