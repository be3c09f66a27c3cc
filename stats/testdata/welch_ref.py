# Reference values for Welch's t-test, CI and MDE in 50-digit arithmetic
# (mpmath 1.3.0; scipy is not installed). t CDF via the regularized
# incomplete beta; quantiles by findroot on it.
from mpmath import mp, mpf, betainc, sqrt, findroot, fabs
mp.dps = 50
def tcdf(x, nu):
    x = mpf(x); nu = mpf(nu)
    ib = betainc(nu/2, mpf(1)/2, 0, nu/(nu+x*x), regularized=True)
    return 1 - ib/2 if x > 0 else ib/2
def tsf(x, nu): return tcdf(-x, nu)
def tppf(q, nu):
    q = mpf(q)
    return findroot(lambda x: tcdf(x, nu) - q, mpf(1.5))
def welch(a, b, conf=mpf('0.95'), alpha=mpf('0.05'), power=mpf('0.8')):
    a=[mpf(x) for x in a]; b=[mpf(x) for x in b]
    na,nb=len(a),len(b)
    ma=sum(a)/na; mb=sum(b)/nb
    va=sum((x-ma)**2 for x in a)/(na-1); vb=sum((x-mb)**2 for x in b)/(nb-1)
    qa,qb=va/na,vb/nb
    se=sqrt(qa+qb); t=(ma-mb)/se
    df=(qa+qb)**2/(qa**2/(na-1)+qb**2/(nb-1))
    p=2*tsf(fabs(t),df)
    tq=tppf((1+conf)/2,df)
    mde=(tppf(1-alpha/2,df)+tppf(power,df))*se
    return dict(t=t,df=df,p=p,lo=ma-mb-tq*se,hi=ma-mb+tq*se,se=se,mde=mde,tq=tq)
# Inputs as the float64 values Go holds: exact binary expansions of the literals.
def f(xs): return [float(x) for x in xs]
X1=f([12.1, 11.8, 13.0, 12.6, 12.2, 11.9, 12.4]); Y1=f([14.2, 10.1, 16.3, 13.8, 9.7, 15.1, 12.9, 17.4, 11.2, 14.9, 13.3])
X2=f([1.02, 0.98, 1.05, 1.01, 0.99]); Y2=f([1.21, 1.18, 1.25, 1.19, 1.22, 1.20])
X3=f([1,2,3]); Y3=f([5,5,5.5,4.5,6,4])
for name,(a,b) in {'case1':(X1,Y1),'case2':(X2,Y2),'case3':(X3,Y3)}.items():
    r=welch(a,b)
    print(name, {k: mp.nstr(v, 17) for k,v in r.items()})
for q,nu in [(0.975,2),(0.8,2),(0.975,1),(0.975,3.5),(0.995,7.25),(0.8,40),(0.975,1000),(0.999,4.2),(0.6,12)]:
    print('q',q,nu, mp.nstr(tppf(mpf(q),nu),17))
# A large case (df about 9900, where gonum's t distribution lost digits):
# the same float64 values the Go test builds.
A=[1 + ((i*7919) % 1000)/1000 for i in range(5000)]
B=[1.01 + ((i*104729) % 997)/997 for i in range(5000)]
r=welch(A,B)
print('large', {k: mp.nstr(v, 17) for k,v in r.items()})
r=welch(X1,Y1,conf=mpf('0.99'),alpha=mpf('0.01'),power=mpf('0.9'))
print('case1 99%', {k: mp.nstr(v, 17) for k,v in r.items()})
