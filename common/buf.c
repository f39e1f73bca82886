/* buf: to be written. */
#include "config.h"
