/* timeutil: to be written. */
#include "config.h"
