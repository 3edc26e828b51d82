// trig_tables — prints the constants of runtime/trl_trig_tables.h (the tables of the correctly
// rounded f64 sin/cos, runtime/trl_math_trig.h), computed with MPFR at 2000 bits: the 42 32-bit
// words of the fraction of 2/pi (Payne–Hanek), pi/2 in 32-bit fixed-point limbs, the four
// Cody–Waite parts of pi/2 (32 bits each but the last) with the remainder's size, pi/2 as a
// double-double, 2/pi, and sin(i/256), cos(i/256) as double-doubles for i < 202.  Its output is
// pasted into the header by hand (the header's layout, four doubles a line, is not this one's).
//   gcc -O2 tools/bench/trig_tables.c -lmpfr -lgmp -lm -o /tmp/trig_tables && /tmp/trig_tables
#include <stdio.h>
#include <mpfr.h>
#include <stdint.h>
#include <math.h>
static void dd(mpfr_t v, double *h, double *l){ mpfr_t t; mpfr_init2(t,400); *h=mpfr_get_d(v,MPFR_RNDN); mpfr_sub_d(t,v,*h,MPFR_RNDN); *l=mpfr_get_d(t,MPFR_RNDN); mpfr_clear(t);}
int main(){
  mpfr_t pi,v,w; mpfr_inits2(2000,pi,v,w,(mpfr_ptr)0);
  mpfr_const_pi(pi,MPFR_RNDN);
  // 2/pi words
  mpfr_ui_div(v,2,pi,MPFR_RNDN);
  printf("2/pi words:\n");
  for(int i=0;i<42;i++){ mpfr_mul_2ui(v,v,32,MPFR_RNDN); mpfr_floor(w,v); unsigned long u=mpfr_get_ui(w,MPFR_RNDN); mpfr_sub(v,v,w,MPFR_RNDN); printf("0x%08lx, ",u); if(i%8==7)printf("\n");}
  printf("\npi/2 fixed (int limb first):\n");
  mpfr_div_2ui(v,pi,1,MPFR_RNDN);
  for(int i=0;i<8;i++){ mpfr_floor(w,v); unsigned long u=mpfr_get_ui(w,MPFR_RNDN); mpfr_sub(v,v,w,MPFR_RNDN); mpfr_mul_2ui(v,v,32,MPFR_RNDN); printf("0x%08lx, ",u);}
  printf("\n");
  // CW parts: 32-bit chunks
  mpfr_div_2ui(v,pi,1,MPFR_RNDN);
  double P[4]; mpfr_set(w,v,MPFR_RNDN);
  for(int i=0;i<3;i++){ mpfr_t c; mpfr_init2(c,32); mpfr_set(c,w,MPFR_RNDN); P[i]=mpfr_get_d(c,MPFR_RNDN); mpfr_sub_d(w,w,P[i],MPFR_RNDN); mpfr_clear(c);}
  P[3]=mpfr_get_d(w,MPFR_RNDN); mpfr_sub_d(w,w,P[3],MPFR_RNDN);
  printf("P: %a %a %a %a  rem %g (log2 %g)\n",P[0],P[1],P[2],P[3],mpfr_get_d(w,MPFR_RNDN),log2(fabs(mpfr_get_d(w,MPFR_RNDN))));
  double h,l; mpfr_div_2ui(v,pi,1,MPFR_RNDN); dd(v,&h,&l); printf("pio2 dd %a %a\n",h,l);
  mpfr_ui_div(v,2,pi,MPFR_RNDN); printf("invpio2 %a\n", mpfr_get_d(v,MPFR_RNDN));
  printf("table:\n");
  for(int i=0;i<202;i++){ double sh,sl,ch,cl; mpfr_set_d(w,i/256.0,MPFR_RNDN); mpfr_sin(v,w,MPFR_RNDN); dd(v,&sh,&sl); mpfr_cos(v,w,MPFR_RNDN); dd(v,&ch,&cl);
    printf("%a, %a, %a, %a,\n",sh,sl,ch,cl);}
}
