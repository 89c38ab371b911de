# No NVDIMM device at all: no NFIT.
scenario_prepare() {
    :
}
