#include "meminfo.h"
