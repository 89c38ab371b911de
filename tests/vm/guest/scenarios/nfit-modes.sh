# Label-backed namespaces in the two modes without DAX (issue 36; the last
# scenario of the nfit-test boot). Sizes come in the regions' alignment, 16
# MiB. raw: 16 MiB, what region0 has left after nfit-test. sector: the BTT
# wants at least its smallest arena (16 MiB) after its 4 KiB info block on
# label-backed namespaces, so 16 MiB fails to enable ("btt0.0: failed to
# enable"): 32 MiB on region1, freed first (its namespaces' checks, nfit-test's
# and nfit-ars', are done). The reference is the harness's `ndctl list -BRN`
# (nfit_modes_checks.py); after the check, the remedy check.json prints for
# each namespace is run and ndctl lists the namespace again.

# modes_namespace MODE REGION SIZE: a namespace, its name on stdout.
modes_namespace() {
    ndctl create-namespace -b nfit_test.0 -r $2 -m $1 -s $3 > $R/create-$1.json \
        2>> $R/commands.log
    sed -n 's/^ *"dev":"\(namespace[0-9.]*\)".*/\1/p' $R/create-$1.json | head -n 1
}

scenario_prepare() {
    run ndctl destroy-namespace -f -b nfit_test.0 -r region1 all
    MODES_SECTOR=$(modes_namespace sector region1 32M)
    MODES_RAW=$(modes_namespace raw region0 16M)
    printf 'sector=%s\nraw=%s\n' "$MODES_SECTOR" "$MODES_RAW" > $R/modes-created.txt
}

# The remedy check.json prints for NS (without its comment), run; then
# ndctl's view of NS.
run_remedy() {
    cmd=$(grep -o "ndctl create-namespace -f -e $1 -m [a-z]*" $R/check.json | head -n 1)
    echo "$cmd" > $R/remedy-$1.txt
    [ -n "$cmd" ] && run $cmd
    echo $? > $R/remedy-$1.rc
    ndctl list -N -n $1 > $R/ndctl-after-$1.json 2>> $R/commands.log
}

scenario_after() {
    run_remedy $MODES_SECTOR
    run_remedy $MODES_RAW
}
