#include "CShims.h"
int inbox_shims_placeholder(void) { return 0; }
