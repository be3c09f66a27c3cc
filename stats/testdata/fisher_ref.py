# Exact two-sided Fisher p-values (scipy.stats.fisher_exact's definition:
# sum of the hypergeometric probabilities of every table with the margins of
# the observed one whose probability is <= the observed table's), in exact
# rational arithmetic with math.comb. scipy is not installed here.
from fractions import Fraction
from math import comb
def fisher(a,b,c,d):
    r1=a+b; r2=c+d; c1=a+c; n=r1+r2
    lo=max(0,c1-r2); hi=min(r1,c1)
    tot=comb(n,c1)
    pm={k:Fraction(comb(r1,k)*comb(r2,c1-k),tot) for k in range(lo,hi+1)}
    px=pm[a]
    return sum(v for v in pm.values() if v<=px)
for t in [(3,1,1,3),(8,2,1,5),(1,9,11,3),(21,9,0,30),(0,30,21,9),(100,900,130,870),(500,9500,560,9440),(50,0,0,50),(2,3,3,2),(0,5,0,5),(7,23,2,28),(1,29,0,30),(0,0,0,0),(1,10,15,10)]:
    if sum(t)==0: print(t,1); continue
    p=fisher(*t)
    print(t, "%.17g"%float(p), p if p.denominator<10**12 else '')
