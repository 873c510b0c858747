fn f0(x: int) -> int:
    return f1(x)

fn f1(x: int) -> int:
    return f2(x)

fn f2(x: int) -> int:
    return f3(x)

fn f3(x: int) -> int:
    return f4(x)

fn f4(x: int) -> int:
    return f5(x)

fn f5(x: int) -> int:
    return f6(x)

fn f6(x: int) -> int:
    return f7(x)

fn f7(x: int) -> int:
    return f8(x)

fn f8(x: int) -> int:
    return f9(x)

fn f9(x: int) -> int:
    return f10(x)

fn f10(x: int) -> int:
    return f11(x)

fn f11(x: int) -> int:
    return f12(x)

fn f12(x: int) -> int:
    return f13(x)

fn f13(x: int) -> int:
    return f14(x)

fn f14(x: int) -> int:
    return f15(x)

fn f15(x: int) -> int:
    return f16(x)

fn f16(x: int) -> int:
    return f17(x)

fn f17(x: int) -> int:
    return f18(x)

fn f18(x: int) -> int:
    return f19(x)

fn f19(x: int) -> int:
    return f20(x)

fn f20(x: int) -> int:
    return f21(x)

fn f21(x: int) -> int:
    return f22(x)

fn f22(x: int) -> int:
    return f23(x)

fn f23(x: int) -> int:
    return f24(x)

fn f24(x: int) -> int:
    return f25(x)

fn f25(x: int) -> int:
    return f26(x)

fn f26(x: int) -> int:
    return f27(x)

fn f27(x: int) -> int:
    return f28(x)

fn f28(x: int) -> int:
    return f29(x)

fn f29(x: int) -> int:
    return f30(x)

fn f30(x: int) -> int:
    return f31(x)

fn f31(x: int) -> int:
    return f32(x)

fn f32(x: int) -> int:
    return f33(x)

fn f33(x: int) -> int:
    return f34(x)

fn f34(x: int) -> int:
    return f35(x)

fn f35(x: int) -> int:
    return f36(x)

fn f36(x: int) -> int:
    return f37(x)

fn f37(x: int) -> int:
    return f38(x)

fn f38(x: int) -> int:
    return f39(x)

fn f39(x: int) -> int:
    return f40(x)

fn f40(x: int) -> int:
    return f41(x)

fn f41(x: int) -> int:
    return f42(x)

fn f42(x: int) -> int:
    return f43(x)

fn f43(x: int) -> int:
    return f44(x)

fn f44(x: int) -> int:
    return f45(x)

fn f45(x: int) -> int:
    return f46(x)

fn f46(x: int) -> int:
    return f47(x)

fn f47(x: int) -> int:
    return f48(x)

fn f48(x: int) -> int:
    return f49(x)

fn f49(x: int) -> int:
    return f50(x)

fn f50(x: int) -> int:
    return f51(x)

fn f51(x: int) -> int:
    return f52(x)

fn f52(x: int) -> int:
    return f53(x)

fn f53(x: int) -> int:
    return f54(x)

fn f54(x: int) -> int:
    return f55(x)

fn f55(x: int) -> int:
    return f56(x)

fn f56(x: int) -> int:
    return f57(x)

fn f57(x: int) -> int:
    return f58(x)

fn f58(x: int) -> int:
    return f59(x)

fn f59(x: int) -> int:
    return f60(x)

fn f60(x: int) -> int:
    return f61(x)

fn f61(x: int) -> int:
    return f62(x)

fn f62(x: int) -> int:
    return f63(x)

fn f63(x: int) -> int:
    return f64(x)

fn f64(x: int) -> int:
    return f65(x)

fn f65(x: int) -> int:
    return f66(x)

fn f66(x: int) -> int:
    return f67(x)

fn f67(x: int) -> int:
    return f68(x)

fn f68(x: int) -> int:
    return f69(x)

fn f69(x: int) -> int:
    return f70(x)

fn f70(x: int) -> int:
    return f71(x)

fn f71(x: int) -> int:
    return f72(x)

fn f72(x: int) -> int:
    return f73(x)

fn f73(x: int) -> int:
    return f74(x)

fn f74(x: int) -> int:
    return f75(x)

fn f75(x: int) -> int:
    return f76(x)

fn f76(x: int) -> int:
    return f77(x)

fn f77(x: int) -> int:
    return f78(x)

fn f78(x: int) -> int:
    return f79(x)

fn f79(x: int) -> int:
    return f80(x)

fn f80(x: int) -> int:
    return f81(x)

fn f81(x: int) -> int:
    return f82(x)

fn f82(x: int) -> int:
    return f83(x)

fn f83(x: int) -> int:
    return f84(x)

fn f84(x: int) -> int:
    return f85(x)

fn f85(x: int) -> int:
    return f86(x)

fn f86(x: int) -> int:
    return f87(x)

fn f87(x: int) -> int:
    return f88(x)

fn f88(x: int) -> int:
    return f89(x)

fn f89(x: int) -> int:
    return f90(x)

fn f90(x: int) -> int:
    return f91(x)

fn f91(x: int) -> int:
    return f92(x)

fn f92(x: int) -> int:
    return f93(x)

fn f93(x: int) -> int:
    return f94(x)

fn f94(x: int) -> int:
    return f95(x)

fn f95(x: int) -> int:
    return f96(x)

fn f96(x: int) -> int:
    return f97(x)

fn f97(x: int) -> int:
    return f98(x)

fn f98(x: int) -> int:
    return f99(x)

fn f99(x: int) -> int:
    return f100(x)

fn f100(x: int) -> int:
    return f101(x)

fn f101(x: int) -> int:
    return f102(x)

fn f102(x: int) -> int:
    return f103(x)

fn f103(x: int) -> int:
    return f104(x)

fn f104(x: int) -> int:
    return f105(x)

fn f105(x: int) -> int:
    return f106(x)

fn f106(x: int) -> int:
    return f107(x)

fn f107(x: int) -> int:
    return f108(x)

fn f108(x: int) -> int:
    return f109(x)

fn f109(x: int) -> int:
    return f110(x)

fn f110(x: int) -> int:
    return f111(x)

fn f111(x: int) -> int:
    return f112(x)

fn f112(x: int) -> int:
    return f113(x)

fn f113(x: int) -> int:
    return f114(x)

fn f114(x: int) -> int:
    return f115(x)

fn f115(x: int) -> int:
    return f116(x)

fn f116(x: int) -> int:
    return f117(x)

fn f117(x: int) -> int:
    return f118(x)

fn f118(x: int) -> int:
    return f119(x)

fn f119(x: int) -> int:
    return f120(x)

fn f120(x: int) -> int:
    return f121(x)

fn f121(x: int) -> int:
    return f122(x)

fn f122(x: int) -> int:
    return f123(x)

fn f123(x: int) -> int:
    return f124(x)

fn f124(x: int) -> int:
    return f125(x)

fn f125(x: int) -> int:
    return f126(x)

fn f126(x: int) -> int:
    return f127(x)

fn f127(x: int) -> int:
    return f128(x)

fn f128(x: int) -> int:
    return f129(x)

fn f129(x: int) -> int:
    return f130(x)

fn f130(x: int) -> int:
    return f131(x)

fn f131(x: int) -> int:
    return f132(x)

fn f132(x: int) -> int:
    return f133(x)

fn f133(x: int) -> int:
    return f134(x)

fn f134(x: int) -> int:
    return f135(x)

fn f135(x: int) -> int:
    return f136(x)

fn f136(x: int) -> int:
    return f137(x)

fn f137(x: int) -> int:
    return f138(x)

fn f138(x: int) -> int:
    return f139(x)

fn f139(x: int) -> int:
    return f140(x)

fn f140(x: int) -> int:
    return f141(x)

fn f141(x: int) -> int:
    return f142(x)

fn f142(x: int) -> int:
    return f143(x)

fn f143(x: int) -> int:
    return f144(x)

fn f144(x: int) -> int:
    return f145(x)

fn f145(x: int) -> int:
    return f146(x)

fn f146(x: int) -> int:
    return f147(x)

fn f147(x: int) -> int:
    return f148(x)

fn f148(x: int) -> int:
    return f149(x)

fn f149(x: int) -> int:
    return f150(x)

fn f150(x: int) -> int:
    return f151(x)

fn f151(x: int) -> int:
    return f152(x)

fn f152(x: int) -> int:
    return f153(x)

fn f153(x: int) -> int:
    return f154(x)

fn f154(x: int) -> int:
    return f155(x)

fn f155(x: int) -> int:
    return f156(x)

fn f156(x: int) -> int:
    return f157(x)

fn f157(x: int) -> int:
    return f158(x)

fn f158(x: int) -> int:
    return f159(x)

fn f159(x: int) -> int:
    return f160(x)

fn f160(x: int) -> int:
    return f161(x)

fn f161(x: int) -> int:
    return f162(x)

fn f162(x: int) -> int:
    return f163(x)

fn f163(x: int) -> int:
    return f164(x)

fn f164(x: int) -> int:
    return f165(x)

fn f165(x: int) -> int:
    return f166(x)

fn f166(x: int) -> int:
    return f167(x)

fn f167(x: int) -> int:
    return f168(x)

fn f168(x: int) -> int:
    return f169(x)

fn f169(x: int) -> int:
    return f170(x)

fn f170(x: int) -> int:
    return f171(x)

fn f171(x: int) -> int:
    return f172(x)

fn f172(x: int) -> int:
    return f173(x)

fn f173(x: int) -> int:
    return f174(x)

fn f174(x: int) -> int:
    return f175(x)

fn f175(x: int) -> int:
    return f176(x)

fn f176(x: int) -> int:
    return f177(x)

fn f177(x: int) -> int:
    return f178(x)

fn f178(x: int) -> int:
    return f179(x)

fn f179(x: int) -> int:
    return f180(x)

fn f180(x: int) -> int:
    return f181(x)

fn f181(x: int) -> int:
    return f182(x)

fn f182(x: int) -> int:
    return f183(x)

fn f183(x: int) -> int:
    return f184(x)

fn f184(x: int) -> int:
    return f185(x)

fn f185(x: int) -> int:
    return f186(x)

fn f186(x: int) -> int:
    return f187(x)

fn f187(x: int) -> int:
    return f188(x)

fn f188(x: int) -> int:
    return f189(x)

fn f189(x: int) -> int:
    return f190(x)

fn f190(x: int) -> int:
    return f191(x)

fn f191(x: int) -> int:
    return f192(x)

fn f192(x: int) -> int:
    return f193(x)

fn f193(x: int) -> int:
    return f194(x)

fn f194(x: int) -> int:
    return f195(x)

fn f195(x: int) -> int:
    return f196(x)

fn f196(x: int) -> int:
    return f197(x)

fn f197(x: int) -> int:
    return f198(x)

fn f198(x: int) -> int:
    return f199(x)

fn f199(x: int) -> int:
    return f200(x)

fn f200(x: int) -> int:
    return f201(x)

fn f201(x: int) -> int:
    return f202(x)

fn f202(x: int) -> int:
    return f203(x)

fn f203(x: int) -> int:
    return f204(x)

fn f204(x: int) -> int:
    return f205(x)

fn f205(x: int) -> int:
    return f206(x)

fn f206(x: int) -> int:
    return f207(x)

fn f207(x: int) -> int:
    return f208(x)

fn f208(x: int) -> int:
    return f209(x)

fn f209(x: int) -> int:
    return f210(x)

fn f210(x: int) -> int:
    return f211(x)

fn f211(x: int) -> int:
    return f212(x)

fn f212(x: int) -> int:
    return f213(x)

fn f213(x: int) -> int:
    return f214(x)

fn f214(x: int) -> int:
    return f215(x)

fn f215(x: int) -> int:
    return f216(x)

fn f216(x: int) -> int:
    return f217(x)

fn f217(x: int) -> int:
    return f218(x)

fn f218(x: int) -> int:
    return f219(x)

fn f219(x: int) -> int:
    return f220(x)

fn f220(x: int) -> int:
    return f221(x)

fn f221(x: int) -> int:
    return f222(x)

fn f222(x: int) -> int:
    return f223(x)

fn f223(x: int) -> int:
    return f224(x)

fn f224(x: int) -> int:
    return f225(x)

fn f225(x: int) -> int:
    return f226(x)

fn f226(x: int) -> int:
    return f227(x)

fn f227(x: int) -> int:
    return f228(x)

fn f228(x: int) -> int:
    return f229(x)

fn f229(x: int) -> int:
    return f230(x)

fn f230(x: int) -> int:
    return f231(x)

fn f231(x: int) -> int:
    return f232(x)

fn f232(x: int) -> int:
    return f233(x)

fn f233(x: int) -> int:
    return f234(x)

fn f234(x: int) -> int:
    return f235(x)

fn f235(x: int) -> int:
    return f236(x)

fn f236(x: int) -> int:
    return f237(x)

fn f237(x: int) -> int:
    return f238(x)

fn f238(x: int) -> int:
    return f239(x)

fn f239(x: int) -> int:
    return f240(x)

fn f240(x: int) -> int:
    return f241(x)

fn f241(x: int) -> int:
    return f242(x)

fn f242(x: int) -> int:
    return f243(x)

fn f243(x: int) -> int:
    return f244(x)

fn f244(x: int) -> int:
    return f245(x)

fn f245(x: int) -> int:
    return f246(x)

fn f246(x: int) -> int:
    return f247(x)

fn f247(x: int) -> int:
    return f248(x)

fn f248(x: int) -> int:
    return f249(x)

fn f249(x: int) -> int:
    return f250(x)

fn f250(x: int) -> int:
    return f251(x)

fn f251(x: int) -> int:
    return f252(x)

fn f252(x: int) -> int:
    return f253(x)

fn f253(x: int) -> int:
    return f254(x)

fn f254(x: int) -> int:
    return f255(x)

fn f255(x: int) -> int:
    return f256(x)

fn f256(x: int) -> int:
    return f257(x)

fn f257(x: int) -> int:
    return f258(x)

fn f258(x: int) -> int:
    return f259(x)

fn f259(x: int) -> int:
    return f260(x)

fn f260(x: int) -> int:
    return f261(x)

fn f261(x: int) -> int:
    return f262(x)

fn f262(x: int) -> int:
    return f263(x)

fn f263(x: int) -> int:
    return f264(x)

fn f264(x: int) -> int:
    return f265(x)

fn f265(x: int) -> int:
    return f266(x)

fn f266(x: int) -> int:
    return f267(x)

fn f267(x: int) -> int:
    return f268(x)

fn f268(x: int) -> int:
    return f269(x)

fn f269(x: int) -> int:
    return f270(x)

fn f270(x: int) -> int:
    return f271(x)

fn f271(x: int) -> int:
    return f272(x)

fn f272(x: int) -> int:
    return f273(x)

fn f273(x: int) -> int:
    return f274(x)

fn f274(x: int) -> int:
    return f275(x)

fn f275(x: int) -> int:
    return f276(x)

fn f276(x: int) -> int:
    return f277(x)

fn f277(x: int) -> int:
    return f278(x)

fn f278(x: int) -> int:
    return f279(x)

fn f279(x: int) -> int:
    return f280(x)

fn f280(x: int) -> int:
    return f281(x)

fn f281(x: int) -> int:
    return f282(x)

fn f282(x: int) -> int:
    return f283(x)

fn f283(x: int) -> int:
    return f284(x)

fn f284(x: int) -> int:
    return f285(x)

fn f285(x: int) -> int:
    return f286(x)

fn f286(x: int) -> int:
    return f287(x)

fn f287(x: int) -> int:
    return f288(x)

fn f288(x: int) -> int:
    return f289(x)

fn f289(x: int) -> int:
    return f290(x)

fn f290(x: int) -> int:
    return f291(x)

fn f291(x: int) -> int:
    return f292(x)

fn f292(x: int) -> int:
    return f293(x)

fn f293(x: int) -> int:
    return f294(x)

fn f294(x: int) -> int:
    return f295(x)

fn f295(x: int) -> int:
    return f296(x)

fn f296(x: int) -> int:
    return f297(x)

fn f297(x: int) -> int:
    return f298(x)

fn f298(x: int) -> int:
    return f299(x)

fn f299(x: int) -> int:
    return f300(x)

fn f300(x: int) -> int:
    return f301(x)

fn f301(x: int) -> int:
    return f302(x)

fn f302(x: int) -> int:
    return f303(x)

fn f303(x: int) -> int:
    return f304(x)

fn f304(x: int) -> int:
    return f305(x)

fn f305(x: int) -> int:
    return f306(x)

fn f306(x: int) -> int:
    return f307(x)

fn f307(x: int) -> int:
    return f308(x)

fn f308(x: int) -> int:
    return f309(x)

fn f309(x: int) -> int:
    return f310(x)

fn f310(x: int) -> int:
    return f311(x)

fn f311(x: int) -> int:
    return f312(x)

fn f312(x: int) -> int:
    return f313(x)

fn f313(x: int) -> int:
    return f314(x)

fn f314(x: int) -> int:
    return f315(x)

fn f315(x: int) -> int:
    return f316(x)

fn f316(x: int) -> int:
    return f317(x)

fn f317(x: int) -> int:
    return f318(x)

fn f318(x: int) -> int:
    return f319(x)

fn f319(x: int) -> int:
    return f320(x)

fn f320(x: int) -> int:
    return f321(x)

fn f321(x: int) -> int:
    return f322(x)

fn f322(x: int) -> int:
    return f323(x)

fn f323(x: int) -> int:
    return f324(x)

fn f324(x: int) -> int:
    return f325(x)

fn f325(x: int) -> int:
    return f326(x)

fn f326(x: int) -> int:
    return f327(x)

fn f327(x: int) -> int:
    return f328(x)

fn f328(x: int) -> int:
    return f329(x)

fn f329(x: int) -> int:
    return f330(x)

fn f330(x: int) -> int:
    return f331(x)

fn f331(x: int) -> int:
    return f332(x)

fn f332(x: int) -> int:
    return f333(x)

fn f333(x: int) -> int:
    return f334(x)

fn f334(x: int) -> int:
    return f335(x)

fn f335(x: int) -> int:
    return f336(x)

fn f336(x: int) -> int:
    return f337(x)

fn f337(x: int) -> int:
    return f338(x)

fn f338(x: int) -> int:
    return f339(x)

fn f339(x: int) -> int:
    return f340(x)

fn f340(x: int) -> int:
    return f341(x)

fn f341(x: int) -> int:
    return f342(x)

fn f342(x: int) -> int:
    return f343(x)

fn f343(x: int) -> int:
    return f344(x)

fn f344(x: int) -> int:
    return f345(x)

fn f345(x: int) -> int:
    return f346(x)

fn f346(x: int) -> int:
    return f347(x)

fn f347(x: int) -> int:
    return f348(x)

fn f348(x: int) -> int:
    return f349(x)

fn f349(x: int) -> int:
    return f350(x)

fn f350(x: int) -> int:
    return f351(x)

fn f351(x: int) -> int:
    return f352(x)

fn f352(x: int) -> int:
    return f353(x)

fn f353(x: int) -> int:
    return f354(x)

fn f354(x: int) -> int:
    return f355(x)

fn f355(x: int) -> int:
    return f356(x)

fn f356(x: int) -> int:
    return f357(x)

fn f357(x: int) -> int:
    return f358(x)

fn f358(x: int) -> int:
    return f359(x)

fn f359(x: int) -> int:
    return f360(x)

fn f360(x: int) -> int:
    return f361(x)

fn f361(x: int) -> int:
    return f362(x)

fn f362(x: int) -> int:
    return f363(x)

fn f363(x: int) -> int:
    return f364(x)

fn f364(x: int) -> int:
    return f365(x)

fn f365(x: int) -> int:
    return f366(x)

fn f366(x: int) -> int:
    return f367(x)

fn f367(x: int) -> int:
    return f368(x)

fn f368(x: int) -> int:
    return f369(x)

fn f369(x: int) -> int:
    return f370(x)

fn f370(x: int) -> int:
    return f371(x)

fn f371(x: int) -> int:
    return f372(x)

fn f372(x: int) -> int:
    return f373(x)

fn f373(x: int) -> int:
    return f374(x)

fn f374(x: int) -> int:
    return f375(x)

fn f375(x: int) -> int:
    return f376(x)

fn f376(x: int) -> int:
    return f377(x)

fn f377(x: int) -> int:
    return f378(x)

fn f378(x: int) -> int:
    return f379(x)

fn f379(x: int) -> int:
    return f380(x)

fn f380(x: int) -> int:
    return f381(x)

fn f381(x: int) -> int:
    return f382(x)

fn f382(x: int) -> int:
    return f383(x)

fn f383(x: int) -> int:
    return f384(x)

fn f384(x: int) -> int:
    return f385(x)

fn f385(x: int) -> int:
    return f386(x)

fn f386(x: int) -> int:
    return f387(x)

fn f387(x: int) -> int:
    return f388(x)

fn f388(x: int) -> int:
    return f389(x)

fn f389(x: int) -> int:
    return f390(x)

fn f390(x: int) -> int:
    return f391(x)

fn f391(x: int) -> int:
    return f392(x)

fn f392(x: int) -> int:
    return f393(x)

fn f393(x: int) -> int:
    return f394(x)

fn f394(x: int) -> int:
    return f395(x)

fn f395(x: int) -> int:
    return f396(x)

fn f396(x: int) -> int:
    return f397(x)

fn f397(x: int) -> int:
    return f398(x)

fn f398(x: int) -> int:
    return f399(x)

fn f399(x: int) -> int:
    return f400(x)

fn f400(x: int) -> int:
    return f401(x)

fn f401(x: int) -> int:
    return f402(x)

fn f402(x: int) -> int:
    return f403(x)

fn f403(x: int) -> int:
    return f404(x)

fn f404(x: int) -> int:
    return f405(x)

fn f405(x: int) -> int:
    return f406(x)

fn f406(x: int) -> int:
    return f407(x)

fn f407(x: int) -> int:
    return f408(x)

fn f408(x: int) -> int:
    return f409(x)

fn f409(x: int) -> int:
    return f410(x)

fn f410(x: int) -> int:
    return f411(x)

fn f411(x: int) -> int:
    return f412(x)

fn f412(x: int) -> int:
    return f413(x)

fn f413(x: int) -> int:
    return f414(x)

fn f414(x: int) -> int:
    return f415(x)

fn f415(x: int) -> int:
    return f416(x)

fn f416(x: int) -> int:
    return f417(x)

fn f417(x: int) -> int:
    return f418(x)

fn f418(x: int) -> int:
    return f419(x)

fn f419(x: int) -> int:
    return f420(x)

fn f420(x: int) -> int:
    return f421(x)

fn f421(x: int) -> int:
    return f422(x)

fn f422(x: int) -> int:
    return f423(x)

fn f423(x: int) -> int:
    return f424(x)

fn f424(x: int) -> int:
    return f425(x)

fn f425(x: int) -> int:
    return f426(x)

fn f426(x: int) -> int:
    return f427(x)

fn f427(x: int) -> int:
    return f428(x)

fn f428(x: int) -> int:
    return f429(x)

fn f429(x: int) -> int:
    return f430(x)

fn f430(x: int) -> int:
    return f431(x)

fn f431(x: int) -> int:
    return f432(x)

fn f432(x: int) -> int:
    return f433(x)

fn f433(x: int) -> int:
    return f434(x)

fn f434(x: int) -> int:
    return f435(x)

fn f435(x: int) -> int:
    return f436(x)

fn f436(x: int) -> int:
    return f437(x)

fn f437(x: int) -> int:
    return f438(x)

fn f438(x: int) -> int:
    return f439(x)

fn f439(x: int) -> int:
    return f440(x)

fn f440(x: int) -> int:
    return f441(x)

fn f441(x: int) -> int:
    return f442(x)

fn f442(x: int) -> int:
    return f443(x)

fn f443(x: int) -> int:
    return f444(x)

fn f444(x: int) -> int:
    return f445(x)

fn f445(x: int) -> int:
    return f446(x)

fn f446(x: int) -> int:
    return f447(x)

fn f447(x: int) -> int:
    return f448(x)

fn f448(x: int) -> int:
    return f449(x)

fn f449(x: int) -> int:
    return f450(x)

fn f450(x: int) -> int:
    return f451(x)

fn f451(x: int) -> int:
    return f452(x)

fn f452(x: int) -> int:
    return f453(x)

fn f453(x: int) -> int:
    return f454(x)

fn f454(x: int) -> int:
    return f455(x)

fn f455(x: int) -> int:
    return f456(x)

fn f456(x: int) -> int:
    return f457(x)

fn f457(x: int) -> int:
    return f458(x)

fn f458(x: int) -> int:
    return f459(x)

fn f459(x: int) -> int:
    return f460(x)

fn f460(x: int) -> int:
    return f461(x)

fn f461(x: int) -> int:
    return f462(x)

fn f462(x: int) -> int:
    return f463(x)

fn f463(x: int) -> int:
    return f464(x)

fn f464(x: int) -> int:
    return f465(x)

fn f465(x: int) -> int:
    return f466(x)

fn f466(x: int) -> int:
    return f467(x)

fn f467(x: int) -> int:
    return f468(x)

fn f468(x: int) -> int:
    return f469(x)

fn f469(x: int) -> int:
    return f470(x)

fn f470(x: int) -> int:
    return f471(x)

fn f471(x: int) -> int:
    return f472(x)

fn f472(x: int) -> int:
    return f473(x)

fn f473(x: int) -> int:
    return f474(x)

fn f474(x: int) -> int:
    return f475(x)

fn f475(x: int) -> int:
    return f476(x)

fn f476(x: int) -> int:
    return f477(x)

fn f477(x: int) -> int:
    return f478(x)

fn f478(x: int) -> int:
    return f479(x)

fn f479(x: int) -> int:
    return f480(x)

fn f480(x: int) -> int:
    return f481(x)

fn f481(x: int) -> int:
    return f482(x)

fn f482(x: int) -> int:
    return f483(x)

fn f483(x: int) -> int:
    return f484(x)

fn f484(x: int) -> int:
    return f485(x)

fn f485(x: int) -> int:
    return f486(x)

fn f486(x: int) -> int:
    return f487(x)

fn f487(x: int) -> int:
    return f488(x)

fn f488(x: int) -> int:
    return f489(x)

fn f489(x: int) -> int:
    return f490(x)

fn f490(x: int) -> int:
    return f491(x)

fn f491(x: int) -> int:
    return f492(x)

fn f492(x: int) -> int:
    return f493(x)

fn f493(x: int) -> int:
    return f494(x)

fn f494(x: int) -> int:
    return f495(x)

fn f495(x: int) -> int:
    return f496(x)

fn f496(x: int) -> int:
    return f497(x)

fn f497(x: int) -> int:
    return f498(x)

fn f498(x: int) -> int:
    return f499(x)

fn f499(x: int) -> int:
    return f500(x)

fn f500(x: int) -> int:
    return x

fn main():
    print(f0(1))
