// libyaml is plain C with no macros we need; the shim only includes it.
#ifndef CYAML_SHIM_H
#define CYAML_SHIM_H
#include <yaml.h>
#endif
