/// libmagic's MIME names as the host's MIME database knows them.
///
/// libmagic (file 5.44 here) and shared-mime-info name some formats differently (`application/winhelp` and
/// `application/winhlp`, `video/x-flc` and `video/x-flic`), and libmagic prints some types shared-mime-info does not
/// have at all (`application/x-ms-shortcut`). Its answers are normalised here before they become identifiers, so
/// that a sniffed type is the one a name gives and every identifier `inboxctl info` prints resolves in
/// `inboxctl types`.
public enum LibmagicNames {
    /// libmagic's name -> shared-mime-info's canonical name, where the host aliases neither to the other. Each
    /// target is a type shared-mime-info declares (a test checks them against this host's database).
    public static let hostNames: [String: String] = [
        "application/cdfv2": "application/x-ole-storage",
        "application/vnd.ms-office": "application/x-ole-storage",
        "application/vnd-ms-works": "application/vnd.ms-works",
        "application/vnd.ms-works-db": "application/vnd.ms-works",
        "application/winhelp": "application/winhlp",
        "application/x-winhelp": "application/winhlp",
        "application/x-bytecode.python": "application/x-python-bytecode",
        "application/x-coredump": "application/x-core",
        "application/x-dosexec": "application/x-ms-dos-executable",
        "application/x-java-applet": "application/x-java",
        "application/vnd.ms-opentype": "font/otf",
        "audio/mid": "audio/midi",
        "audio/vnd.dolby.dd-raw": "audio/ac3",
        "audio/x-hx-aac-adif": "audio/aac",
        "audio/x-hx-aac-adts": "audio/aac",
        "audio/x-mp4a-latm": "audio/mp4",
        "font/sfnt": "font/ttf",
        "font/x-postscript-pfb": "application/x-font-type1",
        "image/x-ms-bmp": "image/bmp",
        "image/x-portable-greymap": "image/x-portable-graymap",
        "text/x-awk": "application/x-awk",
        "text/x-gawk": "application/x-awk",
        "text/x-nawk": "application/x-awk",
        "text/x-c++": "text/x-c++src",
        "text/x-info": "text/x-texinfo",
        "text/x-lisp": "text/x-common-lisp",
        "text/x-m4": "application/x-m4",
        "text/x-objective-c": "text/x-objcsrc",
        "text/x-php": "application/x-php",
        "text/x-ruby": "application/x-ruby",
        "text/x-script.python": "text/x-python3",
        "text/x-shellscript": "application/x-shellscript",
        "video/x-dv": "video/dv",
        "video/x-flc": "video/x-flic",
    ]

    /// The types libmagic's database can print that shared-mime-info does not declare (made from its compiled
    /// magic, file 5.44, less the names above and those the built-in table declares): known types, each with a
    /// dynamic identifier, though no name maps to them.
    public static let vocabulary: Set<String> = Set("""
        application/mac-binhex application/cbor application/etl application/marc application/msonenote application/sereal
        application/syzygy application/ttml+xml application/vnd.comicbook application/vnd.cups-ppd
        application/vnd.cups-raster application/vnd.fdf application/vnd.font-fontforge-sfd
        application/vnd.gentoo.catmetadata+xml application/vnd.gentoo.ebuild application/vnd.gentoo.eclass
        application/vnd.gentoo.gpkg application/vnd.gentoo.manifest application/vnd.gentoo.pkgmetadata+xml
        application/vnd.gentoo.xpak application/vnd.hdt application/vnd.mif application/vnd.ms-fontobject
        application/vnd.ms-outlook application/vnd.ms-project application/vnd.oasis.opendocument.image-template
        application/vnd.pagemaker application/vnd.resilient.logic application/vnd.sar application/vnd.sketchup.skp
        application/vnd.softmaker.planmaker application/vnd.softmaker.presentations application/vnd.stardivision.cal
        application/vnd.sun.xml.writer.web application/warc application/wasm application/x-5view
        application/x-abook-addressbook application/x-ace-compressed application/x-acorn-68e
        application/x-acronis-tib application/x-adobe-aco application/x-adrift application/x-aes-encrypted
        application/x-amf application/x-apple-rsr application/x-appleworks3 application/x-aria
        application/x-atari-msa application/x-avira-qua application/x-avm-export application/x-bentley-cel
        application/x-bentley-dgn application/x-blorb application/x-borland-cbt
        application/x-c32-comboot-syslinux-exec application/x-cdf application/x-chrome-extension
        application/x-clamav application/x-clamav-database application/x-coff application/x-commodore-basic
        application/x-commodore-exec application/x-compress-cazip application/x-compress-ftcomp
        application/x-compress-j application/x-compress-jar application/x-compress-pucrunch
        application/x-compress-ttcomp application/x-corel-ccx application/x-corel-cph application/x-corel-gal
        application/x-corelpresentations application/x-crypt-nc application/x-dbase-index application/x-dbase-prf
        application/x-dbm application/x-dbt application/x-dc-rom application/x-dc42-floppy-image application/x-dfont
        application/x-dif application/x-dmp application/x-dosdriver application/x-dzip application/x-ebu-stl
        application/x-edi-pack-lzss application/x-edid-dump application/x-eet application/x-elc
        application/x-epoc-agenda application/x-epoc-app application/x-epoc-data application/x-epoc-jotter
        application/x-epoc-opl application/x-epoc-opo application/x-epoc-sheet application/x-epoc-word
        application/x-floppy-image-tc application/x-font-gdos application/x-font-pf2 application/x-font-pfm
        application/x-font-sfn application/x-fpt application/x-freemind application/x-freeplane application/x-fzip
        application/x-garmin-gpm application/x-garmin-lbl application/x-garmin-map application/x-garmin-mdr
        application/x-garmin-net application/x-garmin-nod application/x-garmin-rgn application/x-garmin-srt
        application/x-garmin-tre application/x-garmin-trf application/x-garmin-typ application/x-geoswath-rdf
        application/x-git application/x-glulx application/x-google-ab application/x-grib application/x-grib2
        application/x-grub-keyboard application/x-hdf5 application/x-ia-arc application/x-ibm-dsk
        application/x-ibm-rom application/x-ichitaro4 application/x-ichitaro5 application/x-ichitaro6
        application/x-ima application/x-incredimail application/x-innosetup application/x-innosetup-msg
        application/x-installshield application/x-installshield-compress-szdd application/x-installshield-ins
        application/x-intel-aml application/x-ios-app application/x-java-image application/x-java-jmod
        application/x-kdelnk application/x-lanalyzer application/x-lif-disk application/x-lx-executable
        application/x-lz4+json application/x-mach-binary application/x-maple-hdb application/x-maple-lib
        application/x-matlab-data application/x-maxis-dbpf application/x-ms-arn application/x-ms-cag
        application/x-ms-compress-kwaj application/x-ms-compress-sz application/x-ms-compress-szdd
        application/x-ms-dat application/x-ms-dbx application/x-ms-ese application/x-ms-evtx application/x-ms-info
        application/x-ms-jumplist application/x-ms-mdz application/x-ms-mig application/x-ms-msg
        application/x-ms-ne-executable application/x-ms-nickfile application/x-ms-oft application/x-ms-pdb
        application/x-ms-reader application/x-ms-rra application/x-ms-sdb application/x-ms-sdi
        application/x-ms-shortcut application/x-ms-srs application/x-ms-thumbnail application/x-ms-w3-executable
        application/x-ms-w4-executable application/x-msbinder application/x-nekovm-bytecode application/x-nettl
        application/x-norton-guide application/x-norton-msg application/x-novell-compress application/x-nrg
        application/x-numpy-data application/x-omf-lib application/x-os2-hlp application/x-os2-inf
        application/x-os2-ini application/x-os2-msg application/x-os2-wpi application/x-pef+xml
        application/x-perfmon application/x-pnf application/x-putty-private-key application/x-quark-xpress-3
        application/x-quicktime-player application/x-raspberry-eeprom application/x-scribus
        application/x-sega-teradrive-rom application/x-setupscript application/x-silverlight-app
        application/x-snappy-framed application/x-star-sdv application/x-starcalc application/x-starchart
        application/x-stargallery-sdg application/x-stargallery-thm application/x-starimpress application/x-starmath
        application/x-starwriter application/x-starwriter-global application/x-std-dictionary
        application/x-svr4-package application/x-sylk application/x-t3vm-image application/x-tads
        application/x-tasmota-dmp application/x-terminfo application/x-terminfo2 application/x-tex-tfm
        application/x-tokyocabinet-btree application/x-tokyocabinet-fixed application/x-tokyocabinet-hash
        application/x-tokyocabinet-table application/x-tplink-bin application/x-trid-trd
        application/x-vnd.corel.designer.document+zip application/x-vnd.corel.draw.document+zip
        application/x-vnd.corel.draw.template+zip application/x-vnd.corel.symbol.library+zip
        application/x-vnd.corel.zcf.designer.document+zip application/x-vnd.corel.zcf.draw.document+zip
        application/x-vnd.corel.zcf.draw.template+zip application/x-vnd.corel.zcf.pattern+zip
        application/x-vnd.corel.zcf.symbol.library+zip application/x-windows-gadget application/x-wine-extension-ini
        application/x-wine-extension-msp application/x-winhelp-fts application/x-wordperfect-adv
        application/x-wordperfect-all application/x-wordperfect-cbt application/x-wordperfect-drs
        application/x-wordperfect-fil application/x-wordperfect-help application/x-wordperfect-ins
        application/x-wordperfect-irs application/x-wordperfect-keyboard application/x-wordperfect-mrs
        application/x-wordperfect-prs application/x-wordperfect-qrs application/x-wordperfect-vrs
        application/x-wordperfect-wordlist application/x-wordperfect-wpm application/x-xbmc-xbt
        application/x-zmachine application/xml-sitemap audio/x-adx audio/x-bcstm audio/x-bcwav audio/x-bfstm
        audio/x-brstm audio/x-dec-basic audio/x-idf audio/x-mids audio/x-sap audio/x-sfbk audio/x-syx
        audio/x-unknown audio/x-vgm audio/x-vpm-garmin audio/x-vpm-wav-garmin audio/x-w64 audio/x-xbox-executable
        audio/x-xbox360-executable chemical/x-pdb font/x-amiga-font font/x-dos-cpi font/x-drdos-cpi image/bpg
        image/jls image/jxr image/x-atari-degas image/x-award-bioslogo image/x-award-bioslogo2 image/x-commodore-vbm
        image/x-corel-bmf image/x-corel-cpt image/x-corel-des image/x-cpi image/x-dcx image/x-deskmate-fig
        image/x-dpx image/x-epoc-mbm image/x-epoc-sketch image/x-garmin-exe image/x-gem image/x-godot-stex
        image/x-greenstreet-art image/x-hsi image/x-ibm-pointer image/x-idf image/x-ilab image/x-intergraph
        image/x-intergraph-cit image/x-intergraph-rgb image/x-intergraph-rle image/x-lss16 image/x-miff
        image/x-ms-awd image/x-ms-icl image/x-mvg image/x-os2-graphics image/x-os2-ico image/x-paintnet image/x-pgf
        image/x-polar-monitor-bitmap image/x-portable-arbitrarymap image/x-qoi image/x-sony-tim
        image/x-ulead-imaginfo image/x-ulead-pe3 image/x-ulead-pe4 image/x-ulead-pst image/x-ulead-tpl
        image/x-unknown image/x-wordperfect-graphics image/x-wpg image/x-x3f image/x-xv-thumbnail image/x.nifti
        model/e57 model/vnd.collada+xml model/x-autodesk-max model/x3d+vrml model/x3d+xml text/pgp text/texmacs
        text/vnd.sosi text/x-algol68 text/x-bcpl text/x-clojure text/x-dmtf-mif text/x-execline text/x-forth
        text/x-gimp-curve text/x-gimp-ggr text/x-gimp-gpl text/x-installshield-lid text/x-luatex text/x-modulefile
        text/x-ms-adm text/x-ms-cpx text/x-ms-scf text/x-ms-tag text/x-msdos-batch text/x-systemtap text/x-via-scf
        text/x-wine-extension-reg text/x-xmcd video/mpeg4-generic video/vnd.dvb.file video/x-4xmv video/x-amv
        video/x-cdxa video/x-ifo video/x-jng video/x-mmm video/x-vdr
        """.split(whereSeparator: { $0 == " " || $0 == "\n" }).map(String.init))

    /// libmagic's answer in the host's terms: parameters and case dropped, renamed where the host says otherwise.
    static func normalized(_ mimeType: String) -> String {
        let plain = MIMEDatabase.normalized(mimeType)
        return hostNames[plain] ?? plain
    }
}
