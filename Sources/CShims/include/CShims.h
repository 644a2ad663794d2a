int inbox_shims_placeholder(void);
